#include "engine/event_simulator.hpp"

#include <algorithm>

namespace stalesgd {

EventSimulator::EventSimulator(int workers, const StragglerProfile& delays, std::uint64_t seed,
                               DelayMode mode, double compute_s)
    : workers_(workers),
      mode_(mode),
      compute_s_(compute_s),
      state_(static_cast<std::size_t>(workers)),
      stats_(static_cast<std::size_t>(workers)) {
  delays_.reserve(static_cast<std::size_t>(workers));
  for (int w = 0; w < workers; ++w) {
    delays_.emplace_back(delays, w, seed);
    stats_[static_cast<std::size_t>(w)].worker = w;
  }
}

void EventSimulator::start(int w, Callbacks& callbacks) {
  auto& s = state_[static_cast<std::size_t>(w)];
  auto& st = stats_[static_cast<std::size_t>(w)];
  if (s.waiting) st.idle_s += now_ - s.waiting_since;
  s.waiting = false;
  s.computing = true;
  s.version = version_;
  s.started_at = now_;
  ++st.started;
  callbacks.on_start(now_, w, version_);
  const double x = delays_[static_cast<std::size_t>(w)].next(now_);
  const double duration = mode_ == DelayMode::kPad ? std::max(compute_s_, x) : compute_s_ + x;
  events_.push({now_ + duration, seq_++, w, s.generation});
}

Status EventSimulator::run(Callbacks& callbacks) {
  for (int w = 0; w < workers_; ++w) start(w, callbacks);
  std::vector<int> restart;
  while (!events_.empty()) {
    const Event e = events_.top();
    auto& s = state_[static_cast<std::size_t>(e.worker)];
    if (e.generation != s.generation) {  // cancelled earlier
      events_.pop();
      continue;
    }
    if (!callbacks.before_event(e.t, version_)) return {};
    events_.pop();
    now_ = e.t;
    auto& st = stats_[static_cast<std::size_t>(e.worker)];
    s.computing = false;
    st.busy_s += now_ - s.started_at;
    ++st.computed;  // the virtual engine computes a gradient exactly when it arrives
    ++st.pushed;
    auto decision = callbacks.on_arrival(now_, e.worker, s.version);
    if (!decision) return decision.error();
    const Decision& d = *decision;
    if (!d.accept) ++st.cancelled;
    if (d.accept && !d.apply && d.next == AfterPush::kWait) {
      s.waiting = true;
      s.waiting_since = now_;
      continue;
    }
    if (!(d.accept && d.apply)) {
      start(e.worker, callbacks);
      continue;
    }
    ++version_;
    // Everyone the update frees or interrupts restarts now, in worker order (deterministic).
    restart.clear();
    for (int w = 0; w < workers_; ++w) {
      auto& o = state_[static_cast<std::size_t>(w)];
      if (w == e.worker || o.waiting) {
        restart.push_back(w);
      } else if (o.computing && d.cancel_in_flight) {
        ++o.generation;
        o.computing = false;
        auto& ost = stats_[static_cast<std::size_t>(w)];
        ost.busy_s += now_ - o.started_at;
        ++ost.cancelled;
        callbacks.on_cancel(now_, w);
        restart.push_back(w);
      }
    }
    for (int w : restart) start(w, callbacks);
  }
  return {};
}

}  // namespace stalesgd
