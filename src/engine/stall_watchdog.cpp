// StallWatchdog: no update for --stall-timeout ends the run (see stall_watchdog.hpp).
#include "engine/stall_watchdog.hpp"

#include <fmt/format.h>

#include "stalesgd/straggler/duration.hpp"

namespace stalesgd {

StallWatchdog::StallWatchdog(double timeout_s, Clock::time_point start)
    : timeout_s_(timeout_s), since_(start) {}

bool StallWatchdog::stalled(Clock::time_point now, std::uint64_t version) {
  if (version != version_) {
    version_ = version;
    since_ = now;
    return false;
  }
  quiet_s_ = std::chrono::duration<double>(now - since_).count();
  return timeout_s_ > 0.0 && quiet_s_ >= timeout_s_;
}

std::string StallWatchdog::message(const std::string& stuck) const {
  return fmt::format(
      "the run stalled: no update for {:.1f} s (--stall-timeout {}) at iteration {}{}{}; raise "
      "--stall-timeout if the delays are this long, or lower --worker-timeout to run on without "
      "hung workers",
      quiet_s_, format_duration(timeout_s_), version_, stuck.empty() ? "" : "; ", stuck);
}

}  // namespace stalesgd
