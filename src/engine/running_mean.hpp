// RunningMean: an exponentially weighted mean (1/16 on the newest sample), so that a worker's
// estimates of its gradient time and of its wake-ups' lateness follow the machine's load as it
// drifts; GradientClock: a worker's gradient time and its pad-mode lead, built on it.
//
// Thread safety: none; each instance belongs to one thread or is guarded by its owner's lock.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

namespace stalesgd {

class RunningMean {
 public:
  using Clock = std::chrono::steady_clock;

  void add(double x) {
    value_ = empty_ ? x : value_ + (x - value_) / 16.0;
    empty_ = false;
  }
  bool empty() const { return empty_; }
  double value() const { return value_; }
  // How late a wake-up aimed at `aim` came. Clamped: a wake-up delayed by a busy machine says
  // little about the next one.
  void add_lateness(Clock::time_point aim) {
    add(std::min(std::chrono::duration<double>(Clock::now() - aim).count(), 300e-6));
  }

 private:
  double value_ = 0.0;
  bool empty_ = true;
};

// A worker's gradient time (running mean and mean absolute deviation) and, from it, how long
// before X a pad-mode worker starts its gradient: the usual time with room for a slow one. Not
// more: in k-sync every gradient started early and then cut is waste. Shared by every engine
// whose workers sleep first and compute last.
class GradientClock {
 public:
  // Runs `compute` (returning std::optional: nullopt when cut) and learns from its time when it
  // finished.
  template <class Compute>
  auto time(Compute&& compute) {
    const auto c0 = RunningMean::Clock::now();
    auto result = compute();
    if (result) {
      const double c = std::chrono::duration<double>(RunningMean::Clock::now() - c0).count();
      if (!mean_.empty()) dev_.add(std::abs(c - mean_.value()));
      mean_.add(c);
    }
    return result;
  }
  // Seconds to start before X; -1 while no gradient has been timed (compute at once).
  double lead_s() const {
    return mean_.empty() ? -1.0 : mean_.value() + 3.0 * dev_.value() + 30e-6;
  }

 private:
  RunningMean mean_;
  RunningMean dev_;
};

}  // namespace stalesgd
