// An emulated network link with one-way latency and bandwidth between two TAP devices, for
// tools/two_hosts.sh --link (this kernel has no netem). Plain C++20 and Linux, no stalesgd.
// usage: link_emulator --a TAP_A --b TAP_B [--latency 1ms] [--bandwidth 1gbit] [--mtu 65000]
// Prints `ready` once both TAPs exist (the caller then moves them into namespaces). Each
// direction is a FIFO: a frame starts serialising when the previous one has finished
// (size * 8 / bandwidth), arrives `latency` after its last bit left, and is tail-dropped when
// more than kQueueBytes wait to be serialised (a router's queue). SIGUSR1 cuts the link (queued
// and new frames are dropped), SIGUSR2 restores it; SIGTERM or SIGINT stop it.
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

constexpr std::int64_t kQueueBytes = 4 << 20;      // waiting to be serialised, per direction
constexpr std::int64_t kInFlightBytes = 64 << 20;  // memory guard when there is no bandwidth cap
constexpr std::size_t kFrameBuffer = 65536 + 64;   // the largest TAP MTU (65521) plus headers
constexpr int kReadsPerWakeup = 64;                // then the other fds get their turn

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "link_emulator: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr,
               "link_emulator: %s (usage: link_emulator --a TAP --b TAP "
               "[--latency 1ms] [--bandwidth 1gbit] [--mtu 65000])\n",
               message.c_str());
  std::exit(2);
}

// "1.5ms" with a unit from `units` -> value * scale; nullopt when malformed or above `max`.
// "0" needs no unit.
std::optional<double> parse_scaled(std::string_view text,
                                   std::initializer_list<std::pair<std::string_view, double>> units,
                                   double max) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || !std::isfinite(value) || value < 0) return std::nullopt;
  const std::string_view unit(end, text.data() + text.size() - end);
  if (unit.empty() && value == 0) return 0.0;
  for (const auto& [name, scale] : units)
    if (unit == name && value * scale <= max) return value * scale;
  return std::nullopt;
}

std::int64_t now_ns() {
  timespec ts{};
  if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) die("clock_gettime");
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// A TAP device that disappears with this process (not persistent), non-blocking so that one
// wake-up can drain it.
int open_tap(const std::string& name, int mtu) {
  const int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) die("open /dev/net/tun");
  ifreq ifr{};
  ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
  std::snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name.c_str());
  if (ioctl(fd, TUNSETIFF, &ifr) != 0) die(("TUNSETIFF " + name).c_str());
  const int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (sock < 0) die("socket");
  ifr.ifr_mtu = mtu;
  if (ioctl(sock, SIOCSIFMTU, &ifr) != 0) die(("set MTU of " + name).c_str());
  if (close(sock) != 0) die("close");
  return fd;
}

struct Frame {
  std::int64_t deliver_ns;
  std::vector<unsigned char> bytes;
};

// One direction of the link: frames read from `from`, written to `to` when due.
// Only the main thread exists; nothing here is shared.
struct Direction {
  int from = -1;
  int to = -1;
  std::deque<Frame> queue;
  std::int64_t in_flight_bytes = 0;
  std::int64_t last_finish_ns = 0;  // when the previous frame's last bit leaves the sender
  std::uint64_t delivered = 0, dropped = 0;
};

struct Link {
  std::int64_t latency_ns = 0;
  double bits_per_s = 0;  // 0: unlimited
  bool cut = false;
};

void enqueue(Direction& d, const Link& link, const unsigned char* data, std::size_t size) {
  const std::int64_t now = now_ns();
  const std::int64_t start = std::max(now, d.last_finish_ns);
  const std::int64_t size_b = static_cast<std::int64_t>(size);
  // Bytes still waiting to be serialised, from the backlog's drain time alone.
  const std::int64_t backlog =
      link.bits_per_s > 0
          ? static_cast<std::int64_t>(static_cast<double>(start - now) * link.bits_per_s / 8e9)
          : 0;
  if (link.cut || backlog + size_b > kQueueBytes || d.in_flight_bytes + size_b > kInFlightBytes) {
    ++d.dropped;
    return;
  }
  const std::int64_t serialise =
      link.bits_per_s > 0
          ? static_cast<std::int64_t>(static_cast<double>(size_b) * 8e9 / link.bits_per_s)
          : 0;
  d.last_finish_ns = start + serialise;
  d.queue.push_back({d.last_finish_ns + link.latency_ns, {data, data + size}});
  d.in_flight_bytes += size_b;
}

void read_frames(Direction& d, const Link& link, std::vector<unsigned char>& buffer) {
  for (int i = 0; i < kReadsPerWakeup; ++i) {
    const ssize_t n = read(d.from, buffer.data(), buffer.size());
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n < 0) die("read from TAP");
    enqueue(d, link, buffer.data(), static_cast<std::size_t>(n));
  }
}

void deliver_due(Direction& d, std::int64_t now) {
  while (!d.queue.empty() && d.queue.front().deliver_ns <= now) {
    const Frame& f = d.queue.front();
    // A TAP write is accepted or refused at once (EIO while the interface is down): a drop.
    if (write(d.to, f.bytes.data(), f.bytes.size()) == static_cast<ssize_t>(f.bytes.size()))
      ++d.delivered;
    else
      ++d.dropped;
    d.in_flight_bytes -= static_cast<std::int64_t>(f.bytes.size());
    d.queue.pop_front();
  }
}

void drop_all(Direction& d) {
  d.dropped += d.queue.size();
  d.queue.clear();
  d.in_flight_bytes = 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string tap_a, tap_b;
  Link link;
  int mtu = 65000;
  for (int i = 1; i < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) usage_error(std::string(flag) + " needs a value");
    const std::string_view value = argv[i + 1];
    if (flag == "--a") {
      tap_a = value;
    } else if (flag == "--b") {
      tap_b = value;
    } else if (flag == "--latency") {
      const auto ns =
          parse_scaled(value, {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}}, 3600e9);
      if (!ns) usage_error("--latency '" + std::string(value) + "': use e.g. 1ms, 500us (< 1 h)");
      link.latency_ns = static_cast<std::int64_t>(*ns);
    } else if (flag == "--bandwidth") {
      const auto bps =
          parse_scaled(value, {{"bit", 1}, {"kbit", 1e3}, {"mbit", 1e6}, {"gbit", 1e9}}, 1e15);
      if (!bps || *bps < 1)
        usage_error("--bandwidth '" + std::string(value) + "': use e.g. 100mbit, 1gbit");
      link.bits_per_s = *bps;
    } else if (flag == "--mtu") {
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), mtu);
      if (ec != std::errc() || end != value.data() + value.size() || mtu < 68 || mtu > 65521)
        usage_error("--mtu '" + std::string(value) + "': use 68 to 65521");
    } else {
      usage_error("unknown flag '" + std::string(flag) + "'");
    }
  }
  if (tap_a.empty() || tap_b.empty()) usage_error("--a and --b are required");
  if (tap_a.size() >= IFNAMSIZ || tap_b.size() >= IFNAMSIZ)
    usage_error("TAP names have at most 15 characters");

  // Signals arrive through a signalfd, so the poll loop sees them like any other event.
  sigset_t signals;
  if (sigemptyset(&signals) != 0) die("sigemptyset");
  for (int s : {SIGTERM, SIGINT, SIGUSR1, SIGUSR2})
    if (sigaddset(&signals, s) != 0) die("sigaddset");
  if (sigprocmask(SIG_BLOCK, &signals, nullptr) != 0) die("sigprocmask");
  const int signal_fd = signalfd(-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC);
  if (signal_fd < 0) die("signalfd");
  // Deliveries are due at absolute times; a timerfd wakes us then (microseconds, no spinning).
  const int timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (timer_fd < 0) die("timerfd_create");

  // A link should not wait for the hosts' CPUs: at normal priority a frame can wait for a time
  // slice while MPI ranks spin on both cores (1 ms latency, alternating runs: 1-float RTT
  // 2.20-2.80 ms, 2.16-2.41 ms at SCHED_FIFO). It blocks in poll between frames, and Linux caps
  // real-time tasks at 95% of a core.
  sched_param priority{};
  priority.sched_priority = 1;
  if (sched_setscheduler(0, SCHED_FIFO, &priority) != 0)
    std::fprintf(stderr, "link_emulator: at normal priority (SCHED_FIFO: %s)\n",
                 std::strerror(errno));

  const int fd_a = open_tap(tap_a, mtu);
  const int fd_b = open_tap(tap_b, mtu);
  if (std::printf("ready\n") < 0 || std::fflush(stdout) != 0) die("write ready");

  Direction dirs[2];
  dirs[0].from = dirs[1].to = fd_a;
  dirs[0].to = dirs[1].from = fd_b;
  std::vector<unsigned char> buffer(kFrameBuffer);
  pollfd fds[4] = {
      {fd_a, POLLIN, 0}, {fd_b, POLLIN, 0}, {timer_fd, POLLIN, 0}, {signal_fd, POLLIN, 0}};
  for (bool running = true; running;) {
    if (poll(fds, 4, -1) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    if (fds[3].revents & POLLIN) {
      signalfd_siginfo info{};
      while (read(signal_fd, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
        if (info.ssi_signo == SIGUSR1) {
          link.cut = true;
          for (Direction& d : dirs) drop_all(d);
        } else if (info.ssi_signo == SIGUSR2) {
          link.cut = false;
        } else {
          running = false;
        }
      }
      if (errno != EAGAIN) die("read signalfd");
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].revents & (POLLERR | POLLNVAL)) {  // its namespace was deleted under us
        std::fprintf(stderr, "link_emulator: TAP %s went away\n",
                     i == 0 ? tap_a.c_str() : tap_b.c_str());
        return 1;
      }
      if (fds[i].revents & POLLIN) read_frames(dirs[i], link, buffer);
    }
    if (fds[2].revents & POLLIN) {
      std::uint64_t expirations = 0;
      if (read(timer_fd, &expirations, sizeof expirations) < 0 && errno != EAGAIN)
        die("read timerfd");
    }
    const std::int64_t now = now_ns();
    std::int64_t next = 0;  // 0 disarms the timer
    for (Direction& d : dirs) {
      deliver_due(d, now);
      if (!d.queue.empty() && (next == 0 || d.queue.front().deliver_ns < next))
        next = d.queue.front().deliver_ns;
    }
    itimerspec due{};
    due.it_value = {static_cast<time_t>(next / 1'000'000'000),
                    static_cast<long>(next % 1'000'000'000)};
    if (timerfd_settime(timer_fd, TFD_TIMER_ABSTIME, &due, nullptr) != 0) die("timerfd_settime");
  }
  std::fprintf(
      stderr,
      "link_emulator: %s->%s %llu delivered %llu dropped; %s->%s %llu delivered %llu dropped\n",
      tap_a.c_str(), tap_b.c_str(), static_cast<unsigned long long>(dirs[0].delivered),
      static_cast<unsigned long long>(dirs[0].dropped), tap_b.c_str(), tap_a.c_str(),
      static_cast<unsigned long long>(dirs[1].delivered),
      static_cast<unsigned long long>(dirs[1].dropped));
  return 0;
}
