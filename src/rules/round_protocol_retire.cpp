// RoundProtocol::retire: a failed worker leaves the protocol, and the rule learns how many
// workers are left (docs/rules.md, "Failed workers").
#include "rules/round_protocol.hpp"

#include <algorithm>

namespace stalesgd {

int RoundProtocol::live() const {
  return static_cast<int>(std::count_if(state_.begin(), state_.end(), [](const WorkerState& s) {
    return s.phase != Phase::kRetired;
  }));
}

RoundProtocol::Retirement RoundProtocol::retire(int w, std::uint64_t current) {
  starts_.clear();
  Retirement r;
  r.step = {Decision{}, starts_};
  WorkerState& gone = state_[ix(w)];
  if (gone.phase == Phase::kRetired) {
    r.runs_on = rule_.runs_with(live());
    return r;
  }
  // Its minibatch in flight is lost like a cut one; a gradient it already delivered (it waits
  // for the update) stays in the round.
  if (gone.phase == Phase::kComputing) ++gone.cancelled;
  if (gone.phase == Phase::kHeld) --held_;
  gone.phase = Phase::kRetired;
  const int left = live();
  if (!rule_.runs_with(left)) {
    r.runs_on = false;
    return r;
  }
  r.step.decision = rule_.on_retire(w, left);
  if (!r.step.decision.apply) {
    // The slowest live worker may be the one gone: held workers may go (ssp).
    release_held(current);
    r.step.start = starts_;
    return r;
  }
  // The update the departure completed: as in on_arrival, everyone waiting for it and (the
  // synchronous rules) everyone it cuts restart on the new version, in worker order.
  const std::uint64_t next = current + 1;
  for (int v = 0; v < workers(); ++v) {
    WorkerState& s = state_[ix(v)];
    if (s.phase == Phase::kWaiting) {
      start(v, next, false);
    } else if (s.phase == Phase::kComputing &&
               (r.step.decision.cancel_in_flight || rule_.cuts_at(s.version, next))) {
      ++s.cancelled;
      start(v, next, true);
    }
  }
  release_held(next);
  r.step.start = starts_;
  return r;
}

}  // namespace stalesgd
