// A `stalesgd serve` started in the background for a test, in its own session (as a terminal's
// job would be), with its stdout, stderr, pid and exit status in files; and a GET over HTTP
// with curl; and require_httplib(). The waits are bounded polls (they fail a hung server, they time
// nothing). Header-only: the suite compiles tests' *_test.cpp files and support/ only.
#pragma once

#include <chrono>
#include <cstdlib>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "support/fixtures.hpp"

namespace stalesgd::test {

class ServeProcess {
 public:
  // How long a wait may take before the test gives up on a hung server (it times nothing).
  static constexpr std::chrono::milliseconds kPatience{60000};

  // `args`: what follows `stalesgd serve` (no single quotes); `env`: "NAME=value ..." or "".
  explicit ServeProcess(const std::string& args, const std::string& env = "");
  ~ServeProcess();  // kills the server if the test did not stop it
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  // "http://HOST:PORT/" from the line serve prints when it listens; "" if it ended first.
  std::string url();
  // Sends `signal` (INT, TERM) and returns the exit status; -1 if it has not ended within
  // `patience`.
  int stop(const std::string& signal, std::chrono::milliseconds patience = kPatience);
  // Waits for the process to end on its own; its exit status, or -1 if it had not ended within
  // `patience`.
  int wait(std::chrono::milliseconds patience = kPatience);
  // The server's pid (for /proc/PID/status).
  const std::string& pid() const { return pid_; }
  // Its stdout and stderr so far.
  std::string out() const;
  std::string err() const;

 private:
  TempDir files_;
  std::string pid_;
  bool ended_ = false;
};

struct HttpResult {
  int status = 0;
  std::string body;
};
// GET `url` with curl, the path sent as written (--path-as-is: no client-side "..").
HttpResult http_get(const std::string& url, const std::string& host_header = "");

namespace serve_detail {

constexpr auto kPatience = ServeProcess::kPatience;

inline bool exists(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::exists(p, ec);
}

}  // namespace serve_detail

inline ServeProcess::ServeProcess(const std::string& args, const std::string& env) {
  const std::string dir = files_.path().string();
  // sh -c records its pid, then execs setsid (no fork: it is not a group leader) and stalesgd,
  // so the pid is the server's. The subshell waits for it and records the exit status.
  // Under ThreadSanitizer, reports from inside cpp-httplib (not instrumented) are suppressed:
  // tests/serve/tsan.supp says why. Other builds ignore it.
  const std::string tsan = "export TSAN_OPTIONS=\"${TSAN_OPTIONS:+$TSAN_OPTIONS:}suppressions=" +
                           std::string(STALESGD_SOURCE_DIR) + "/tests/serve/tsan.supp\"; ";
  run_shell(tsan + "( sh -c 'echo $$ >" + dir + "/pid; exec setsid env --default-signal=INT,TERM " +
            env + " " + kCli + " serve " + args + "' >" + dir + "/out 2>" + dir +
            "/err; echo $? >" + dir + "/rc ) >/dev/null 2>&1 & true");
  const auto deadline = std::chrono::steady_clock::now() + serve_detail::kPatience;
  while (pid_.empty() && std::chrono::steady_clock::now() < deadline) {
    pid_ = slurp(files_ / "pid");
    while (!pid_.empty() && pid_.back() == '\n') pid_.pop_back();
    if (pid_.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (pid_.empty()) throw std::runtime_error("stalesgd serve did not start: " + args);
}

inline ServeProcess::~ServeProcess() {
  if (!ended_ && !serve_detail::exists(files_ / "rc")) {
    run_shell("kill -KILL " + pid_ + " 2>/dev/null");
    wait();
  }
}

inline std::string ServeProcess::url() {
  static const std::regex kUrl(R"(http://[^ ]+:[0-9]+/)");
  const auto deadline = std::chrono::steady_clock::now() + serve_detail::kPatience;
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string text = out();
    std::smatch m;
    if (std::regex_search(text, m, kUrl)) return m.str();
    if (serve_detail::exists(files_ / "rc")) return "";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return "";
}

inline int ServeProcess::stop(const std::string& signal, std::chrono::milliseconds patience) {
  run_shell("kill -" + signal + " " + pid_);
  return wait(patience);
}

inline int ServeProcess::wait(std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (!serve_detail::exists(files_ / "rc") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!serve_detail::exists(files_ / "rc")) return -1;  // still running: the destructor kills it
  ended_ = true;
  // The subshell may not have finished writing the status yet.
  for (int i = 0; i < 100; ++i) {
    const std::string rc = slurp(files_ / "rc");
    if (!rc.empty() && rc.back() == '\n') return std::stoi(rc);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

// A build without cpp-httplib has a `serve` that only says how to get it (that one line is
// checked here); the tests that call this need the real one.
inline void require_httplib() {
  const auto r = run_cli({"serve", "/nonexistent"});
  if (r.output.find("needs cpp-httplib") != std::string::npos) {
    CHECK(line_count(r.output) == 1);
    FAIL(
        "this build has no cpp-httplib: run tools/setup.sh serve (it installs "
        "libcpp-httplib-dev), then reconfigure and rebuild (tools/build.sh)");
  }
}

inline std::string ServeProcess::out() const {
  return slurp(files_ / "out");
}
inline std::string ServeProcess::err() const {
  return slurp(files_ / "err");
}

inline HttpResult http_get(const std::string& url, const std::string& host_header) {
  const std::string host = host_header.empty() ? "" : " -H 'Host: " + host_header + "'";
  const auto r = run_shell("curl -s --path-as-is --max-time 30" + host + " -w '\\n%{http_code}' '" +
                           url + "'");
  const auto nl = r.output.rfind('\n');
  if (nl == std::string::npos) return {0, r.output};
  return {std::atoi(r.output.c_str() + nl + 1), r.output.substr(0, nl)};
}

}  // namespace stalesgd::test
