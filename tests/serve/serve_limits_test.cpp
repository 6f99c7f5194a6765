// `stalesgd serve` cannot be wedged (docs/serve.md, "Limits"), through the real binary over
// HTTP: FIFOs where a run's files should be, a 1 GiB file under /files/, clients that trickle a
// request a byte at a time, and SIGTERM while a request is still arriving.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <fstream>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include "serve/serve_process.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

// A run folder with one snapshot, enough for serve to list it.
void write_run(const fs::path& run) {
  fs::create_directories(run);
  std::ofstream(run / "evals.csv") << "wall_s,iteration,train_loss,test_loss,test_error\n"
                                      "0,0,2.3,2.3,0.9\n";
}

void make_fifo(const fs::path& path) {
  fs::create_directories(path.parent_path());
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
}

// Whether any process has the FIFO open for reading (a writer opened without blocking fails
// with ENXIO when none has).
bool fifo_has_reader(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0) ::close(fd);
  return fd >= 0;
}

int port_of(const std::string& url) {
  return std::stoi(url.substr(url.rfind(':') + 1));
}

// Polls `done` until it holds or the patience runs out (it times nothing).
bool eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + ServeProcess::kPatience;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// A client that sends a request's first bytes one at a time, 200 ms apart, and never its end;
// it notes when the server closes the connection.
class Trickler {
 public:
  explicit Trickler(int port) : thread_([this, port] { run(port); }) {}
  ~Trickler() {
    stop_ = true;
    thread_.join();
  }
  Trickler(const Trickler&) = delete;
  Trickler& operator=(const Trickler&) = delete;

  int sent() const { return sent_.load(); }
  bool closed_by_server() const { return closed_.load(); }

 private:
  void run(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      closed_ = true;
      if (fd >= 0) ::close(fd);
      return;
    }
    const std::string text =
        "GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + std::string(100000, 'x');
    for (std::size_t i = 0; !stop_ && i < text.size(); ++i) {
      if (::send(fd, &text[i], 1, MSG_NOSIGNAL) != 1) {
        closed_ = true;
        break;
      }
      ++sent_;
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 200) > 0) {
        char buf[512];
        if (::recv(fd, buf, sizeof buf, 0) <= 0) {
          closed_ = true;
          break;
        }
      }
    }
    ::close(fd);
  }

  std::atomic<bool> stop_{false}, closed_{false};  // seq_cst: test code, not hot
  std::atomic<int> sent_{0};
  std::thread thread_;  // last: it starts once the flags above exist
};

// The peak resident set of a live process, in KiB (VmHWM of /proc/PID/status); -1 if unknown.
long peak_rss_kib(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/status");
  std::string key;
  while (in >> key) {
    if (key == "VmHWM:") {
      long kib = -1;
      in >> kib;
      return kib;
    }
    in.ignore(1 << 20, '\n');
  }
  return -1;
}

}  // namespace

TEST_CASE("serve: a FIFO as summary.json or as a journal leaves every endpoint answering",
          "[serve]") {
  require_httplib();
  TempDir dir;
  const fs::path root = dir / "runs";
  write_run(root / "good");
  write_run(root / "fifo-summary");
  make_fifo(root / "fifo-summary" / "summary.json");
  write_run(root / "fifo-journal");
  make_fifo(root / "fifo-journal" / "updates.csv");
  make_fifo(root / "only-fifo" / "summary.json");  // nothing else: not a run

  ServeProcess serve(root.string() + " --port 0");
  const std::string url = serve.url();
  INFO(serve.out() << serve.err());
  REQUIRE(!url.empty());
  CHECK_THAT(serve.out(), Contains("(3 runs)"));

  const auto list = http_get(url + "api/runs");
  INFO(list.body);
  REQUIRE(list.status == 200);
  const auto runs = nlohmann::json::parse(list.body)["runs"];
  REQUIRE(runs.size() == 3);
  std::map<std::string, nlohmann::json> by_id;
  for (const auto& run : runs) by_id[run["id"]] = run;
  REQUIRE(by_id.count("fifo-summary") == 1);
  CHECK(by_id["fifo-summary"]["status"] == "unreadable");
  CHECK_THAT(by_id["fifo-summary"]["message"].get<std::string>(),
             Contains("summary.json is a FIFO, not a regular file"));
  REQUIRE(by_id.count("fifo-journal") == 1);
  REQUIRE(by_id["fifo-journal"]["unreadable"].size() == 1);
  CHECK_THAT(by_id["fifo-journal"]["unreadable"][0].get<std::string>(),
             Contains("updates.csv is a FIFO, not a regular file"));
  CHECK(by_id["fifo-journal"]["rows"]["evals"] == 1);
  CHECK(by_id["good"]["unreadable"].empty());

  // Every endpoint, again and again: nothing was left waiting on a FIFO.
  for (int round = 0; round < 2; ++round) {
    CHECK(http_get(url + "api/runs").status == 200);
    CHECK(http_get(url + "api/run/fifo-summary/series").status == 200);
    CHECK(http_get(url + "api/run/fifo-journal/series").status == 200);
    CHECK(http_get(url + "files/good/evals.csv").status == 200);
    CHECK(http_get(url + "files/fifo-summary/summary.json").status == 404);
    CHECK(http_get(url + "files/fifo-journal/updates.csv").status == 404);
    CHECK(http_get(url).status == 200);
  }
  for (const char* fifo : {"fifo-summary/summary.json", "fifo-journal/updates.csv"}) {
    INFO(fifo);
    CHECK_FALSE(fifo_has_reader(root / fifo));
  }
  CHECK(serve.stop("TERM", std::chrono::seconds(5)) == 143);
}

TEST_CASE("serve: /files/ streams a 1 GiB file with a peak memory far below its size", "[serve]") {
  require_httplib();
  TempDir dir;
  write_run(dir / "run");
  const fs::path big = dir / "run" / "big.bin";
  // Sparse: a gibibyte of zeros on no disk, then a marker that must arrive last.
  REQUIRE(run_shell("truncate -s 1G '" + big.string() + "' && printf END >>'" + big.string() + "'")
              .exit_code == 0);
  const auto size = fs::file_size(big);

  ServeProcess serve((dir / "run").string() + " --port 0");
  const std::string url = serve.url();
  INFO(serve.out() << serve.err());
  REQUIRE(!url.empty());
  const auto got = run_shell("curl -s --max-time 300 -w '\\n%{size_download} %{http_code}' '" +
                             url + "files/big.bin' | tail -c 64");
  INFO(got.output);
  CHECK_THAT(got.output, Contains("END\n" + std::to_string(size) + " 200"));
  const long peak = peak_rss_kib(serve.pid());
  INFO("peak RSS " << peak << " KiB for a file of " << size / 1024 << " KiB");
  REQUIRE(peak > 0);
  CHECK(static_cast<std::uintmax_t>(peak) < size / 1024 / 8);  // under 128 MiB
  CHECK(serve.stop("TERM") == 143);
}

TEST_CASE("serve: clients trickling requests byte by byte do not keep others from an answer",
          "[serve]") {
  require_httplib();
  TempDir dir;
  write_run(dir / "run");
  ServeProcess serve((dir / "run").string() + " --port 0");
  const std::string url = serve.url();
  INFO(serve.out() << serve.err());
  REQUIRE(!url.empty());
  // Twice the threads the server had before it had limits: each holds a connection open.
  std::vector<std::unique_ptr<Trickler>> slow;
  for (int i = 0; i < 8; ++i) slow.push_back(std::make_unique<Trickler>(port_of(url)));
  REQUIRE(eventually([&] {
    for (const auto& t : slow) {
      if (t->sent() < 3 && !t->closed_by_server()) return false;
    }
    return true;
  }));
  const auto runs = http_get(url + "api/runs");
  CHECK(runs.status == 200);
  CHECK(http_get(url).status == 200);
  // And the slow ones do not hold their connections for good: the server ends each.
  CHECK(eventually([&] {
    for (const auto& t : slow) {
      if (!t->closed_by_server()) return false;
    }
    return true;
  }));
  CHECK(serve.stop("TERM") == 143);
}

TEST_CASE("serve: SIGTERM while a request is still arriving ends it at once", "[serve]") {
  require_httplib();
  TempDir dir;
  write_run(dir / "run");
  ServeProcess serve((dir / "run").string() + " --port 0");
  const std::string url = serve.url();
  INFO(serve.out() << serve.err());
  REQUIRE(!url.empty());
  Trickler stuck(port_of(url));
  REQUIRE(eventually([&] { return stuck.sent() >= 3; }));
  // Well before the request's own deadline (5 s) could end it.
  CHECK(serve.stop("TERM", std::chrono::seconds(3)) == 143);
  CHECK(serve.err().find("error") == std::string::npos);
}

TEST_CASE("serve: a client that never reads its reply loses its connection, not a thread",
          "[serve]") {
  require_httplib();
  TempDir dir;
  write_run(dir / "run");
  const fs::path big = dir / "run" / "big.bin";
  REQUIRE(run_shell("truncate -s 256M '" + big.string() + "'").exit_code == 0);
  ServeProcess serve((dir / "run").string() + " --port 0");
  const std::string url = serve.url();
  INFO(serve.out() << serve.err());
  REQUIRE(!url.empty());
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port_of(url)));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  const std::string request = "GET /files/big.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  REQUIRE(::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size()));
  // Not reading for twice the write timeout (5 s): the socket buffers fill and the server's
  // write makes no progress.
  std::this_thread::sleep_for(std::chrono::seconds(10));
  std::uint64_t received = 0;
  std::vector<char> buf(1 << 16);
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 60000) <= 0) break;  // the patience for a hung server
    const ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
    if (n <= 0) break;
    received += static_cast<std::uint64_t>(n);
  }
  ::close(fd);
  INFO("received " << received << " of " << fs::file_size(big) << " bytes");
  CHECK(received > 0);
  CHECK(received < fs::file_size(big));  // the server gave up on it and closed
  CHECK(http_get(url + "api/runs").status == 200);
  CHECK(serve.stop("TERM") == 143);
}
