// The two wake-up policies of the real-thread engine (docs/performance.md, "Many workers").
#include "engine/wake_policy.hpp"

#include <algorithm>
#include <utility>

namespace stalesgd {

bool OwnTimers::on_assign(int, WorkerSlot& slot, bool) {
  slot.assigned = store_.acquire();
  slot.released = true;
  slot.release_timed = false;
  return true;
}

ServerTimers::ServerTimers(std::span<WorkerSlot> slots, ParameterStore& store,
                           const RoundProtocol& protocol, DelayMode mode, WakeTimer::Fail fail)
    : slots_(slots), store_(store), protocol_(protocol), mode_(mode), track_(slots.size()) {
  scratch_ends_.reserve(slots.size());
  timer_ = std::make_unique<WakeTimer>(
      static_cast<int>(slots.size()), [this](int w, std::uint64_t ticket) { release(w, ticket); },
      std::move(fail));
}

void ServerTimers::on_retired(int w) {
  // Its end no longer counts toward the round's cutoff, and it is never released again.
  track_[ix(w)] = Track{};
  timer_->disarm(w);
}

bool ServerTimers::on_assign(int w, WorkerSlot& slot, bool cut_pending) {
  Track& t = track_[ix(w)];
  // Released by after_step() once every assignment of this step is known; the cut
  // minibatch's wake-up, if any, is replaced or disarmed there.
  t.armed = cut_pending && slot.release_timed;
  slot.assigned = ParameterStore::Pin{};  // pinned at the release
  slot.released = false;
  slot.release_timed = false;
  t.ends_at = slot.assigned_at + slot.assigned_x;
  t.unreleased = true;
  return false;
}

void ServerTimers::after_step() {
  const auto now = EngineClock::now();
  // The round's update comes with its `needed`-th earliest end; a minibatch ending later
  // will be cut (ties are released). K is fixed within a round (AdaSync changes it at updates).
  const auto needed = static_cast<std::size_t>(protocol_.still_needed());
  auto cutoff = EngineClock::time_point::max();
  scratch_ends_.clear();
  for (const auto& t : track_) {
    if (t.ends_at != EngineClock::time_point::max()) scratch_ends_.push_back(t.ends_at);
  }
  if (scratch_ends_.size() > needed) {
    const auto nth = scratch_ends_.begin() + static_cast<std::ptrdiff_t>(needed - 1);
    std::nth_element(scratch_ends_.begin(), nth, scratch_ends_.end());
    cutoff = *nth;
  }
  for (std::size_t i = 0; i < track_.size(); ++i) {
    Track& t = track_[i];
    const int w = static_cast<int>(i);
    if (!t.unreleased) continue;
    if (t.ends_at > cutoff) {
      // Sleeps until the update cuts it; a cut minibatch's wake-up must not fire for nothing.
      if (t.armed) timer_->disarm(w);
      t.armed = false;
      continue;
    }
    t.unreleased = false;
    WorkerSlot& slot = slots_[i];
    bool notify = false;
    {
      std::lock_guard lock(slot.mu);
      // The worker computes last: released when its gradient should start, early by the
      // releases' lateness.
      slot.release_aim = compute_from(mode_, slot.assigned_at, slot.assigned_x, slot.lead_s) -
                         to_duration(slot.release_late.value());
      slot.release_timed = slot.release_aim > now;
      slot.released = notify = !slot.release_timed;
      if (notify) slot.due = std::max(slot.due, now);  // held back past its end: due from now
      slot.assigned = store_.acquire();  // the version it was assigned: no update since
      if (!notify) to_arm_.push_back({w, slot.release_aim, slot.ticket});  // replaces an older one
    }
    if (notify && t.armed) timer_->disarm(w);
    t.armed = !notify;
    if (notify) slot.cv.notify_one();
  }
  if (to_arm_.empty()) return;
  timer_->arm(to_arm_);
  to_arm_.clear();
}

void ServerTimers::release(int w, std::uint64_t ticket) {
  WorkerSlot& slot = slots_[ix(w)];
  {
    std::lock_guard lock(slot.mu);
    if (slot.ticket != ticket || !slot.has_assignment || slot.released) return;
    slot.released = true;
  }
  slot.cv.notify_one();
}

}  // namespace stalesgd
