// cpp-httplib's connection loop with a request deadline and connections that can be dropped.
#include "cli/serve_server.hpp"

#ifdef STALESGD_HAVE_HTTPLIB

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

namespace stalesgd::cli {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Waits up to `timeout` for `events` on `sock`; a hang-up or error counts as ready (the read or
// write that follows fails).
bool wait_for(socket_t sock, short events, milliseconds timeout) {
  const auto until = Clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<milliseconds>(until - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{sock, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n > 0) return true;
    if (n == 0 || errno != EINTR) return false;
  }
}

void address_of(socket_t sock, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  const int got = peer ? ::getpeername(sock, reinterpret_cast<sockaddr*>(&addr), &len)
                       : ::getsockname(sock, reinterpret_cast<sockaddr*>(&addr), &len);
  std::array<char, NI_MAXHOST> host{};
  std::array<char, NI_MAXSERV> serv{};
  if (got != 0 || ::getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host.data(), host.size(),
                                serv.data(), serv.size(), NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return;
  }
  ip = host.data();
  port = std::atoi(serv.data());
}

// One request's view of a connection: every read must arrive before `read_deadline` (the
// request's line, headers and any body), each write must start within `write_timeout`.
class DeadlineStream final : public httplib::Stream {
 public:
  DeadlineStream(socket_t sock, Clock::time_point read_deadline, milliseconds write_timeout)
      : sock_(sock), read_deadline_(read_deadline), write_timeout_(write_timeout) {}

  bool is_readable() const override {
    return wait_for(sock_, POLLIN,
                    std::chrono::duration_cast<milliseconds>(read_deadline_ - Clock::now()));
  }
  bool is_writable() const override { return wait_for(sock_, POLLOUT, write_timeout_); }

  ssize_t read(char* ptr, size_t size) override {
    if (at_ < end_) return take(ptr, size);
    if (!is_readable()) return -1;
    // httplib reads a request's line and headers a byte at a time: buffer them.
    if (size >= buffer_.size()) return retry([&] { return ::recv(sock_, ptr, size, 0); });
    const ssize_t n = retry([&] { return ::recv(sock_, buffer_.data(), buffer_.size(), 0); });
    if (n <= 0) return n;
    at_ = 0;
    end_ = static_cast<std::size_t>(n);
    return take(ptr, size);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    // MSG_NOSIGNAL: a client gone mid-reply is a failed write, not a SIGPIPE.
    return retry([&] { return ::send(sock_, ptr, size, MSG_NOSIGNAL); });
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    address_of(sock_, true, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    address_of(sock_, false, ip, port);
  }
  socket_t socket() const override { return sock_; }

 private:
  template <class F>
  static ssize_t retry(F call) {
    for (;;) {
      const ssize_t n = call();
      if (n >= 0 || errno != EINTR) return n;
    }
  }

  ssize_t take(char* ptr, size_t size) {
    const std::size_t n = std::min(size, end_ - at_);
    std::memcpy(ptr, buffer_.data() + at_, n);
    at_ += n;
    return static_cast<ssize_t>(n);
  }

  const socket_t sock_;
  const Clock::time_point read_deadline_;
  const milliseconds write_timeout_;
  std::array<char, 4096> buffer_{};
  std::size_t at_ = 0, end_ = 0;  // the unread bytes of buffer_
};

}  // namespace

GuardedServer::GuardedServer(ServeLimits limits) : limits_(limits) {
  const std::size_t threads = limits_.threads;
  new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // The socket timeouts httplib sets on each connection (SO_RCVTIMEO, SO_SNDTIMEO): a bound on
  // any one blocking call; DeadlineStream bounds the request as a whole.
  set_read_timeout(std::chrono::duration_cast<std::chrono::seconds>(limits_.request_deadline));
  set_write_timeout(limits_.write_timeout);
  set_keep_alive_timeout(limits_.keep_alive.count());
  set_keep_alive_max_count(limits_.max_requests);
}

void GuardedServer::drop_connections() {
  dropping_.store(true);
  std::lock_guard lock(mu_);
  for (const socket_t sock : open_) ::shutdown(sock, SHUT_RDWR);
}

bool GuardedServer::wait_readable(socket_t sock, milliseconds timeout) const {
  return wait_for(sock, POLLIN, timeout);
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  bool registered = false;
  {
    std::lock_guard lock(mu_);
    if (!dropping_.load()) registered = open_.insert(sock).second;
  }
  bool ret = false;
  for (std::size_t served = 0; registered && served < limits_.max_requests; ++served) {
    if (svr_sock_ == INVALID_SOCKET || dropping_.load()) break;
    // The first request as every later one: it must start within the keep-alive time.
    if (!wait_readable(sock, limits_.keep_alive)) break;
    DeadlineStream stream(sock, Clock::now() + limits_.request_deadline,
                          std::chrono::duration_cast<milliseconds>(limits_.write_timeout));
    bool closed = false;
    ret = process_request(stream, served + 1 == limits_.max_requests, closed, nullptr);
    if (!ret || closed) break;
  }
  if (registered) {
    std::lock_guard lock(mu_);
    open_.erase(sock);
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ret;
}

}  // namespace stalesgd::cli

#endif  // STALESGD_HAVE_HTTPLIB
