// EventSimulator's failed workers: a crash drops a worker's events from its time on, a hang its
// deliveries, and the server hears of either as a failure event (docs/rules.md, "Failed
// workers").
#include <algorithm>

#include "sim/event_simulator.hpp"

namespace stalesgd {

void EventSimulator::inject(const FailurePlan& plan, double timeout_s) {
  hang_timeout_s_ = timeout_s;
  for (const auto& f : plan.failures) {
    auto& s = state_[static_cast<std::size_t>(f.worker)];
    (f.kind == FailureKind::kCrash ? s.crash_at : s.hang_at) = f.at_s;
  }
}

void EventSimulator::schedule_crashes() {
  for (std::size_t w = 0; w < state_.size(); ++w) {
    const double at = state_[w].crash_at;
    if (at != kNever) events_.push({at, seq_++, static_cast<int>(w), 0, Event::What::kCrash});
  }
}

Status EventSimulator::fail(const Event& e, Callbacks& callbacks) {
  auto& s = state_[static_cast<std::size_t>(e.worker)];
  auto& st = stats_[static_cast<std::size_t>(e.worker)];
  const bool crash = e.what == Event::What::kCrash;
  if (s.computing) {
    // Its minibatch in flight is void (a crash), or never came (a hang): busy until it failed.
    ++s.generation;
    s.computing = false;
    const double failed_at = crash ? now_ : std::min(now_, s.hang_at);
    st.busy_s += std::max(0.0, failed_at - s.started_at);
  }
  s.free_since = now_;
  auto step =
      callbacks.on_failure(now_, e.worker, crash ? FailureKind::kCrash : FailureKind::kHang);
  if (!step) return step.error();
  carry_out(*step, callbacks);
  return {};
}

}  // namespace stalesgd
