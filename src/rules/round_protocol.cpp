// RoundProtocol: a rule's Decision turned into cuts and starts (docs/rules.md, the rule table).
#include "rules/round_protocol.hpp"
#include "util/state_stream.hpp"

#include <algorithm>

namespace stalesgd {

RoundProtocol::RoundProtocol(Rule& rule, int workers)
    : rule_(rule), state_(static_cast<std::size_t>(workers)) {
  starts_.reserve(state_.size());
}

// A worker that leaves kHeld is started at once: held_ counts the others.
void RoundProtocol::start(int w, std::uint64_t version, bool cut) {
  WorkerState& s = state_[ix(w)];
  if (s.phase == Phase::kHeld) --held_;
  s.phase = Phase::kComputing;
  s.version = version;
  ++s.started;
  starts_.push_back({w, cut});
}

void RoundProtocol::start_or_hold(int w, std::uint64_t version) {
  if (rule_.may_start(w)) {
    start(w, version, false);
    return;
  }
  WorkerState& s = state_[ix(w)];
  if (s.phase != Phase::kHeld) ++held_;
  s.phase = Phase::kHeld;
}

void RoundProtocol::release_held(std::uint64_t version) {
  if (held_ == 0) return;
  for (int v = 0; v < workers(); ++v) {
    if (held(v) && rule_.may_start(v)) start(v, version, false);
  }
}

bool RoundProtocol::time_limited() const {
  for (int w = 0; w < workers(); ++w) {
    if (rule_.budget(w).limited()) return true;
  }
  return false;
}

int RoundProtocol::still_needed() const {
  return std::max(1, rule_.k() - rule_.pending());
}

std::span<const RoundProtocol::Start> RoundProtocol::begin() {
  starts_.clear();
  for (int w = 0; w < workers(); ++w) {
    // A resumed run's failed stay out, and its gated workers stay held.
    if (!retired(w)) start_or_hold(w, begin_version_);
  }
  return starts_;
}

void RoundProtocol::save(StateWriter& out) const {
  out.tag("protocol");
  out.u64(state_.size());
  for (const auto& s : state_) {
    out.u64(static_cast<std::uint64_t>(s.phase));
    out.u64(s.version);
    out.u64(s.started);
    out.u64(s.pushed);
    out.u64(s.cancelled);
  }
}

void RoundProtocol::load(StateReader& in) {
  if (!in.tag("protocol")) return;
  if (in.u64() != state_.size()) {
    in.fail("another number of workers");
    return;
  }
  held_ = 0;
  for (auto& s : state_) {
    const std::uint64_t phase = in.u64();
    if (phase > static_cast<std::uint64_t>(Phase::kHeld)) in.fail("a worker phase unknown");
    s.phase = static_cast<Phase>(phase);
    if (s.phase == Phase::kHeld) ++held_;
    s.version = in.u64();
    s.started = in.u64();
    s.pushed = in.u64();
    s.cancelled = in.u64();
  }
}

void RoundProtocol::restart(std::uint64_t version, std::span<const int> dropped) {
  for (auto& s : state_) {
    // A minibatch in flight at the checkpoint was never finished: started, then cut.
    if (s.phase == Phase::kComputing) ++s.cancelled;
    if (s.phase != Phase::kRetired) s.phase = Phase::kIdle;
  }
  held_ = 0;  // begin() holds again whom the rule's gate holds
  for (const int w : dropped) ++state_[ix(w)].cancelled;
  begin_version_ = version;
}

RoundProtocol::Step RoundProtocol::on_arrival(int w, std::uint64_t computed_on,
                                              std::uint64_t current, int attempts, bool abandoned) {
  starts_.clear();
  WorkerState& pusher = state_[ix(w)];
  ++pusher.pushed;
  pusher.phase = Phase::kIdle;
  const Decision d = rule_.on_gradient({w, computed_on, current, attempts, abandoned});
  if (!d.accept) ++pusher.cancelled;  // stale or abandoned: lost like a cancelled minibatch
  if (!d.accept && !d.apply && !(abandoned && d.next == AfterPush::kWait)) {
    start(w, current, false);
    return {d, starts_};
  }
  if (!d.apply) {
    if (d.next == AfterPush::kWait) {
      pusher.phase = Phase::kWaiting;
    } else {
      start_or_hold(w, current);
    }
    release_held(current);
    return {d, starts_};
  }
  // The update: the pusher, everyone waiting for it and (synchronous rules) everyone cut by it
  // restart on the new version, in worker order so that a seed gives one history.
  const std::uint64_t next = current + 1;
  for (int v = 0; v < workers(); ++v) {
    WorkerState& s = state_[ix(v)];
    if (v == w || s.phase == Phase::kWaiting) {
      start_or_hold(v, next);
    } else if (s.phase == Phase::kComputing &&
               (d.cancel_in_flight || rule_.cuts_at(s.version, next))) {
      ++s.cancelled;
      start(v, next, true);
    }
  }
  // The pusher's count rose: held workers the slowest held back may go (ssp).
  release_held(next);
  return {d, starts_};
}

}  // namespace stalesgd
