// RunningMean: an exponentially weighted mean (1/16 on the newest sample), so that a worker's
// estimates of its gradient time and of its wake-ups' lateness follow the machine's load as it
// drifts.
//
// Thread safety: none; each instance belongs to one thread or is guarded by its owner's lock.
#pragma once

#include <algorithm>
#include <chrono>

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

}  // namespace stalesgd
