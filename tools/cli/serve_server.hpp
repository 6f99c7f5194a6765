// GuardedServer: cpp-httplib's server with the limits that keep `stalesgd serve` answering
// whatever its clients do (docs/serve.md, "Limits"): a bounded pool of connection threads, a
// deadline for a request's line and headers (cpp-httplib's own read timeout is per read, so a
// client trickling a byte a second would hold a thread for good), a write timeout, short
// keep-alive, and a way to end every open connection at once so that a stop never waits on a
// client. Only built with cpp-httplib (STALESGD_HAVE_HTTPLIB).
//
// Thread safety: drop_connections() may be called from any thread; the rest is httplib::Server's
// (its listener thread and the pool's threads run process_and_close_socket()).
#pragma once

#ifdef STALESGD_HAVE_HTTPLIB

#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <set>

#include <httplib.h>

namespace stalesgd::cli {

struct ServeLimits {
  // Connections served at once; more wait for a thread. A few slow clients leave the rest.
  std::size_t threads = 16;
  // From a request's first byte to the end of its headers.
  std::chrono::milliseconds request_deadline{5000};
  // A reply's write that makes no progress for this long ends the connection.
  std::chrono::seconds write_timeout{5};
  // An idle keep-alive connection is closed after this; one serves at most `max_requests`.
  std::chrono::seconds keep_alive{1};
  std::size_t max_requests = 100;
};

class GuardedServer : public httplib::Server {
 public:
  explicit GuardedServer(ServeLimits limits = {});

  // Shuts down every open connection (their reads and writes fail at once) and every one
  // accepted after; call it after stop().
  void drop_connections();

 private:
  // httplib::Server's per-connection loop (a private virtual: overriding it is how a
  // subclass brings its own Stream), with the request deadline and the registry.
  bool process_and_close_socket(socket_t sock) override;
  bool wait_readable(socket_t sock, std::chrono::milliseconds timeout) const;

  const ServeLimits limits_;
  // Set once by drop_connections(); seq_cst like the registry's mutex, read by the pool.
  std::atomic<bool> dropping_{false};
  std::mutex mu_;
  std::set<socket_t> open_;  // guarded by mu_: connections a pool thread is serving
};

}  // namespace stalesgd::cli

#endif  // STALESGD_HAVE_HTTPLIB
