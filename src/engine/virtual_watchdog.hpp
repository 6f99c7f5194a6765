// VirtualWatchdog: ends a virtual-clock run that makes no progress (docs/reliability.md), as
// the StallWatchdog ends a real-clock one. Two ways a virtual run can go on for ever without
// moving: its clock stands at one instant for quiet_limit() events with no update toward an
// --iterations budget (delays that all draw 0 s under a --time budget, e.g. a trace of zeros,
// which option validation cannot see), or the snapshots due by the next event pass
// kMaxVirtualEvaluations (an --eval-every far below the delays of an --iterations run; each is
// scored at once and in full). The engine asks it before every event, so the second is caught
// before a single one of those snapshots is scored.
//
// Thread safety: not thread-safe; the virtual engine's one thread uses it.
#pragma once

#include <cstdint>
#include <string>

#include "stalesgd/config/trainer_options.hpp"

namespace stalesgd {

class VirtualWatchdog {
 public:
  // Events at one instant with no update before the run counts as stalled: 10,000 + 8 P. A
  // run's ties are at most a few per worker (constant delays end every worker's minibatch
  // together, with a cut and a restart each), and each event is a real gradient: a softmax's
  // 10,000 take about a third of a second.
  static constexpr std::uint64_t kQuietEvents = 10'000;
  static constexpr std::uint64_t kQuietEventsPerWorker = 8;

  explicit VirtualWatchdog(const TrainerOptions& options)
      : o_(options),
        quiet_limit_(kQuietEvents +
                     kQuietEventsPerWorker * static_cast<std::uint64_t>(options.workers)) {}
  std::uint64_t quiet_limit() const { return quiet_limit_; }

  // Before an event at virtual time t with `version` updates applied: the stop's one line
  // (the run stalled: how, where, and the fix), or empty to go on.
  std::string check(double t, std::uint64_t version);

 private:
  const TrainerOptions& o_;
  std::uint64_t quiet_limit_;
  double t_ = -1.0;            // the clock when it last moved
  std::uint64_t version_ = 0;  // the version then
  std::uint64_t quiet_ = 0;    // events since, with neither moving
};

}  // namespace stalesgd
