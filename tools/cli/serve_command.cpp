// `stalesgd serve DIR`: a local web page over the runs and races in DIR that follows them while
// they go (docs/serve.md). The routes are serve::ServeApi's (src/serve/, no HTTP there); this
// file is the transport: cpp-httplib's server, the flags, finding the page's files, and the
// signals that stop it. Built without cpp-httplib, the command says how to get it.
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli/commands.hpp"
#include "cli/flag_parsing.hpp"
#include "cli/interrupt.hpp"
#include "cli/serve_server.hpp"
#include "serve/serve_api.hpp"

#ifdef STALESGD_HAVE_HTTPLIB
#include <httplib.h>
#endif

namespace stalesgd::cli {
namespace {
namespace fs = std::filesystem;

struct ServeArgs {
  std::string dir;
  std::string host = "127.0.0.1";
  int port = 6006;
};

#ifdef STALESGD_HAVE_HTTPLIB

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

// The page's files: beside an installed bin/ (wherever the prefix was moved), the source tree
// for a build-tree binary, then the configured install prefix.
fs::path find_web_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && is_dir(exe.parent_path().parent_path() / STALESGD_WEB_DIR)) {
    return exe.parent_path().parent_path() / STALESGD_WEB_DIR;
  }
  if (is_dir(STALESGD_WEB_SOURCE_DIR)) return STALESGD_WEB_SOURCE_DIR;
  return STALESGD_WEB_INSTALL_DIR;
}

// The chart library: STALESGD_WEB_VENDOR_DIR if set, else installed beside the page
// (web/vendor/), else where tools/setup.sh serve puts it in the source tree (data/web/uplot/).
fs::path find_vendor_dir(const fs::path& web_dir) {
  if (const char* env = std::getenv("STALESGD_WEB_VENDOR_DIR"); env && *env) return env;
  if (serve::has_chart_library(web_dir / "vendor")) return web_dir / "vendor";
  return STALESGD_WEB_VENDOR_SOURCE_DIR;
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

// `host` as a URL writes it: an IPv6 address in brackets.
std::string url_host(const std::string& host) {
  return host.find(':') != std::string::npos ? fmt::format("[{}]", host) : host;
}

// The Host headers a browser sends for a loopback address (names a rebound DNS name would not
// match): the usual loopback names and the address listened on, with and without the port.
std::vector<std::string> loopback_hosts(const std::string& host, int port) {
  std::vector<std::string> hosts;
  for (const std::string& name :
       {std::string("127.0.0.1"), std::string("localhost"), std::string("[::1]"), url_host(host)}) {
    hosts.push_back(name);
    hosts.push_back(fmt::format("{}:{}", name, port));
  }
  return hosts;
}

// How long a stop waits for the connection threads before the process ends without them: with
// the signal polled every 50 ms, a stop takes well under a second.
constexpr auto kStopGrace = std::chrono::milliseconds(500);
constexpr std::size_t kFileChunk = std::size_t{64} << 10;

// A file's bytes as the reply, read and sent a chunk at a time (cpp-httplib's content
// provider), so that serving a file of any size holds one chunk. A file cut short while it is
// sent ends the connection: the client sees a reply shorter than its Content-Length.
void send_file(std::shared_ptr<const RegularFile> file, const std::string& type,
               httplib::Response& res) {
  const auto size = static_cast<std::size_t>(file->size());
  auto chunk = std::make_shared<std::vector<char>>(kFileChunk);
  res.set_content_provider(
      size, type, [file, chunk](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
        const auto got = file->read_at(offset, chunk->data(), std::min(length, chunk->size()));
        return got > 0 && sink.write(chunk->data(), static_cast<std::size_t>(got));
      });
}

int run_serve(const ServeArgs& args) {
  // Before anything is printed: a signal that comes once the URL is out must stop the server.
  ScopedInterrupt interrupt;
  std::error_code ec;
  const fs::path root = fs::canonical(args.dir, ec);
  serve::ServeConfig config;
  config.root = ec ? fs::path(args.dir) : root;
  config.web_dir = find_web_dir();
  config.vendor_dir = find_vendor_dir(config.web_dir);
  if (!fs::is_regular_file(config.web_dir / "index.html", ec)) {
    return fail(
        fmt::format("serve: the page's files are missing ({} has no index.html); "
                    "reinstall stalesgd or run it from its build tree",
                    config.web_dir.string()));
  }
  serve::ServeApi api(config);
  auto found = api.rescan();
  if (!found) return fail(fmt::format("serve: {}", found.error().message));
  if (*found == 0) {
    return fail(
        fmt::format("serve: {} holds no runs (no summary.json, updates.csv or evals.csv "
                    "in it or its sub-folders); give a folder written by `stalesgd "
                    "train --out` or `stalesgd race --out`",
                    args.dir));
  }

  // Its limits (threads, the request deadline, timeouts) are docs/serve.md's "Limits".
  GuardedServer server;
  // SO_REUSEADDR only: httplib's default SO_REUSEPORT would let a second server share a port
  // that is in use instead of refusing it.
  server.set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server.set_default_headers({{"Cache-Control", "no-store"},
                              {"X-Content-Type-Options", "nosniff"},
                              {"Referrer-Policy", "no-referrer"}});
  server.Get(".*", [&api](const httplib::Request& req, httplib::Response& res) {
    serve::HttpRequest r;
    r.path = req.path;
    for (const auto& [key, value] : req.params) r.query.emplace(key, value);
    r.host = req.get_header_value("Host");
    auto reply = api.handle(r);
    res.status = reply.status;
    if (reply.file) {
      send_file(std::move(reply.file), reply.content_type, res);
    } else {
      res.set_content(reply.body, reply.content_type.c_str());
    }
  });
  server.set_logger([](const httplib::Request& req, const httplib::Response& res) {
    spdlog::debug("serve: {} {} {}", req.method, req.path, res.status);
  });

  errno = 0;
  int port = args.port;
  const bool bound = port == 0 ? (port = server.bind_to_any_port(args.host)) > 0
                               : server.bind_to_port(args.host, port);
  if (!bound) {
    const int err = errno;
    return fail(fmt::format("serve: cannot listen on {}:{} ({}); {}", args.host, args.port,
                            err != 0 ? std::strerror(err) : "the address does not bind",
                            err == EADDRINUSE ? "another program holds the port: pick another "
                                                "with --port N, or --port 0 for any free one"
                                              : "check --host and --port"));
  }
  // Warnings only once it listens, so that a failure stays the one line on stderr.
  if (!serve::has_chart_library(config.vendor_dir)) {
    fmt::print(stderr, "stalesgd serve: warning: {}; the page shows the table only\n",
               serve::kChartLibraryMissing);
  }
  if (is_loopback(args.host)) {
    api.set_allowed_hosts(loopback_hosts(args.host, port));
  } else {
    fmt::print(stderr,
               "stalesgd serve: WARNING: --host {} makes this page reachable from the network: "
               "anyone who can reach port {} can read the runs in {}\n",
               args.host, port, args.dir);
  }
  fmt::print("stalesgd serve: http://{}:{}/ shows {} ({} run{}); Ctrl-C stops it\n",
             url_host(args.host), port, args.dir, *found, *found == 1 ? "" : "s");
  std::fflush(stdout);

  std::atomic<bool> ended{false};  // the listener returned on its own (release: read below)
  std::thread listener([&] {
    server.listen_after_bind();
    ended.store(true, std::memory_order_release);
  });
  while (!interrupt.flag()->load(std::memory_order_relaxed) &&
         !ended.load(std::memory_order_acquire)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  server.stop();
  server.drop_connections();
  // The pool's threads end as soon as their connections fail; one stuck in a file read (a
  // file system that hangs) would not, and a stop must not wait on it: serve writes nothing,
  // so ending without joining loses nothing (docs/serve.md, "Limits").
  const auto give_up = std::chrono::steady_clock::now() + kStopGrace;
  while (!ended.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const bool interrupted = interrupt.flag()->load(std::memory_order_relaxed);
  if (!ended.load(std::memory_order_acquire)) {
    spdlog::debug("serve: a connection thread did not end; exiting without it");
    spdlog::default_logger()->flush();
    std::fflush(nullptr);
    std::_Exit(interrupt.exit_code());  // not ended: the loop above left on a signal
  }
  listener.join();
  if (interrupted) return interrupt.exit_code();
  return fail("serve: the HTTP server stopped on its own; start it again");
}

#endif  // STALESGD_HAVE_HTTPLIB

}  // namespace

int serve_command(int argc, char** argv) {
  cxxopts::Options options(
      "stalesgd serve",
      "A local web page over the runs in DIR (a `train --out` folder, a `race --out` folder, "
      "or a folder of them),\nlive while they go: test error and loss against time and "
      "iterations, staleness, seconds per\niteration against the theory, cancelled work, "
      "status, progress and ETA. Read-only. Docs: docs/serve.md.");
  // clang-format off
  options.add_options()
      ("dir", "The folder to show", cxxopts::value<std::string>())
      ("port", "TCP port; 0 = any free port (the URL printed says which)", cxxopts::value<int>()->default_value("6006"))
      ("host", "Address to listen on; anything but a loopback address makes the page reachable from the network", cxxopts::value<std::string>()->default_value("127.0.0.1"))
      ("plugin", "Load the rules, models and delay families of these plug-ins (.so files, colons between several), so that runs of their rules show their options; serve never loads a plug-in a run names by itself", cxxopts::value<std::string>())
      ("h,help", "Show this help");
  // clang-format on
  options.parse_positional({"dir"});
  options.positional_help("DIR");
  add_logging_options(options);
  try {
    auto r = parse(options, argc, argv);
    if (auto done = help_or_logging(options, r)) return *done;
    if (!r.count("dir")) return usage_error("serve", "give the folder to show: stalesgd serve DIR");
    ServeArgs a;
    a.dir = r["dir"].as<std::string>();
    a.host = r["host"].as<std::string>();
    a.port = r["port"].as<int>();
    if (a.port < 0 || a.port > 65535) {
      return usage_error("serve", fmt::format("--port {} is not a TCP port (0 to 65535)", a.port));
    }
    if (a.host.empty()) return usage_error("serve", "--host '' names no address");
#ifdef STALESGD_HAVE_HTTPLIB
    return run_serve(a);
#else
    return fail(
        "serve: needs cpp-httplib, and this build has none; install libcpp-httplib-dev "
        "(tools/setup.sh serve) and rebuild");
#endif
  } catch (const cxxopts::exceptions::exception& e) {
    return usage_error("serve", e);
  }
}

}  // namespace stalesgd::cli
