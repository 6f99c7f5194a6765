// thread_room: the kernel's, the pids cgroup's and the user's thread limits.
#include "util/thread_room.hpp"

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "util/cgroup.hpp"
#include "util/memory.hpp"

namespace stalesgd {
namespace {

// Threads on the whole system: the fourth field of /proc/loadavg, "running/total".
std::optional<std::uint64_t> system_threads() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c, d;
  if (!(in >> a >> b >> c >> d)) return std::nullopt;
  const auto slash = d.find('/');
  if (slash == std::string::npos) return std::nullopt;
  try {
    return static_cast<std::uint64_t>(std::stoull(d.substr(slash + 1)));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::uint64_t own_threads() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Threads:", 0) == 0) return std::stoull(line.substr(8));
  }
  return 1;
}

}  // namespace

ThreadRoom thread_room() {
  ThreadRoom room{std::numeric_limits<std::uint64_t>::max(), {}};
  const auto consider = [&](std::uint64_t limit, std::uint64_t used, std::string what) {
    const std::uint64_t left = limit > used ? limit - used : 0;
    if (left < room.threads) room = {left, std::move(what)};
  };
  if (const auto max = read_number_file("/proc/sys/kernel/threads-max")) {
    const std::uint64_t used = system_threads().value_or(0);
    consider(*max, used, fmt::format("the kernel's threads-max of {}, {} running", *max, used));
  }
  if (const auto pids =
          cgroup_limit("pids", "pids.max", "pids.current", "pids.max", "pids.current")) {
    consider(pids->limit, pids->used,
             fmt::format("the pids cgroup's pids.max of {}, {} in use", pids->limit, pids->used));
  }
  rlimit nproc{};
  // Root is not held to RLIMIT_NPROC; the user's other processes count too, so this process's
  // own threads are the least in use.
  if (::geteuid() != 0 && ::getrlimit(RLIMIT_NPROC, &nproc) == 0 &&
      nproc.rlim_cur != RLIM_INFINITY) {
    const std::uint64_t used = own_threads();
    consider(static_cast<std::uint64_t>(nproc.rlim_cur), used,
             fmt::format("this user's process limit (ulimit -u) of {}", nproc.rlim_cur));
  }
  return room;
}

std::uint64_t thread_stack_bytes() {
  pthread_attr_t attr;
  std::size_t size = 0;
  if (pthread_getattr_default_np(&attr) == 0) {
    pthread_attr_getstacksize(&attr, &size);
    pthread_attr_destroy(&attr);
  }
  return size;
}

Status check_threads(std::uint64_t more, std::string_view what, std::string_view fix) {
  const ThreadRoom room = thread_room();
  if (!room.limit.empty() && more > room.threads) {
    return Error{
        fmt::format("{}: {} threads needed, but the system allows only {} more, under {}; {}", what,
                    more, room.threads, room.limit, fix)};
  }
  // Each stack is address space reserved at once: it counts against ulimit -v (and only there;
  // its pages are touched as used).
  rlimit as{};
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    const std::uint64_t stack = thread_stack_bytes();
    const MemoryRoom mem = memory_room();
    if (stack > 0 && more * stack > mem.bytes) {
      return Error{fmt::format(
          "{}: {} threads of {} of stack each reserve {}, but this process may reserve only {} "
          "more, under {}; {}",
          what, more, byte_size_text(static_cast<double>(stack)),
          byte_size_text(static_cast<double>(more * stack)),
          byte_size_text(static_cast<double>(mem.bytes)), mem.limit, fix)};
    }
  }
  return {};
}

std::string out_of_threads_message(std::string_view where) {
  const ThreadRoom room = thread_room();
  return fmt::format(
      "{}: the system would not start another thread (EAGAIN){}; run fewer threads (fewer "
      "--workers, or --clock virtual, which needs none per worker), or raise the limit",
      where, room.limit.empty() ? std::string() : fmt::format(", under {}", room.limit));
}

}  // namespace stalesgd
