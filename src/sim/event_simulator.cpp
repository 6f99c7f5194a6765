// EventSimulator: the discrete-event clock under the virtual engine and the theory's Monte Carlo.
#include "sim/event_simulator.hpp"
#include "util/state_stream.hpp"

#include <algorithm>

namespace stalesgd {

EventSimulator::EventSimulator(int workers, const StragglerProfile& delays, std::uint64_t seed,
                               DelayMode mode, double compute_s, const Machine& machine)
    : mode_(mode),
      compute_s_(compute_s),
      state_(static_cast<std::size_t>(workers)),
      stats_(static_cast<std::size_t>(workers)),
      machine_(machine),
      on_machine_(!machine.free()) {
  delays_.reserve(static_cast<std::size_t>(workers));
  for (int w = 0; w < workers; ++w) {
    delays_.emplace_back(delays, w, seed);
    stats_[static_cast<std::size_t>(w)].worker = w;
  }
}

void EventSimulator::start(int w, Callbacks& callbacks) {
  auto& s = state_[static_cast<std::size_t>(w)];
  auto& st = stats_[static_cast<std::size_t>(w)];
  if (!s.computing) st.idle_s += now_ - s.free_since;
  s.computing = true;
  s.started_at = now_;
  callbacks.on_start(now_, w);
  s.attempt = draw_attempts(delays_[static_cast<std::size_t>(w)], now_, callbacks.budget(w));
  const double x = s.attempt.delay_s;
  if (on_machine_) return start_on_machine(w, x);
  const double duration = mode_ == DelayMode::kPad ? std::max(compute_s_, x) : compute_s_ + x;
  if (now_ + duration >= s.hang_at) {  // never delivered: the server finds it overdue
    events_.push(
        {now_ + duration + hang_timeout_s_, seq_++, w, s.generation, Event::What::kHangFound});
    return;
  }
  events_.push({now_ + duration, seq_++, w, s.generation});
}

Status EventSimulator::run(Callbacks& callbacks) {
  if (!resumed_) {
    schedule_crashes();
    for (const auto& s : callbacks.begin()) start(s.worker, callbacks);
  }
  if (on_machine_) return run_on_machine(callbacks);
  while (!events_.empty()) {
    const Event e = events_.top();
    auto& s = state_[static_cast<std::size_t>(e.worker)];
    if (e.what != Event::What::kCrash && e.generation != s.generation) {  // cut earlier
      events_.pop();
      continue;
    }
    if (!callbacks.before_event(e.t)) return {};
    events_.pop();
    now_ = e.t;
    if (e.what != Event::What::kArrival) {
      if (auto failed = fail(e, callbacks); !failed) return failed;
      continue;
    }
    auto& st = stats_[static_cast<std::size_t>(e.worker)];
    s.computing = false;
    s.free_since = now_;
    st.busy_s += now_ - s.started_at;
    ++st.computed;  // the virtual engine computes a gradient exactly when it arrives
    auto step = callbacks.on_arrival(now_, e.worker);
    if (!step) return step.error();
    carry_out(*step, callbacks);
  }
  return {};
}

void EventSimulator::carry_out(const RoundProtocol::Step& step, Callbacks& callbacks) {
  // A worker hung by now hears neither the cut nor the restart: it goes on "computing" the
  // minibatch it hung in, whose overdue end the server finds (kHangFound), as the real
  // engines find a hung thread however often its work was cancelled.
  const auto hung = [&](int w) {
    const auto& o = state_[static_cast<std::size_t>(w)];
    return o.computing && now_ >= o.hang_at;
  };
  // Every cut first (its pending event is void), then every start, in the protocol's order.
  for (const auto& c : step.start) {
    if (!c.cut || hung(c.worker)) continue;
    auto& o = state_[static_cast<std::size_t>(c.worker)];
    ++o.generation;
    o.computing = false;
    o.free_since = now_;
    stats_[static_cast<std::size_t>(c.worker)].busy_s += now_ - o.started_at;
    // Its compute leaves the cores (the job in the queue is void by its generation).
    if (o.phase == WorkerState::Phase::kCompute) --cpu_active_;
    o.phase = WorkerState::Phase::kIdle;
    callbacks.on_cancel(now_, c.worker);
  }
  for (const auto& c : step.start) {
    if (!hung(c.worker)) start(c.worker, callbacks);
  }
}

void EventSimulator::save(StateWriter& out) const {
  out.tag("events");
  out.f64(now_);
  out.u64(seq_);
  auto queue = events_;  // a copy: the heap's order is the pops'
  out.u64(queue.size());
  for (; !queue.empty(); queue.pop()) {
    const Event& e = queue.top();
    out.f64(e.t);
    out.u64(e.seq);
    out.i64(e.worker);
    out.u64(e.generation);
    out.u64(static_cast<std::uint64_t>(e.what));
  }
  for (std::size_t w = 0; w < state_.size(); ++w) {
    const WorkerState& s = state_[w];
    const WorkerRecord& st = stats_[w];
    out.boolean(s.computing);
    out.u64(s.generation);
    out.f64(s.started_at);
    out.f64(s.free_since);
    out.u64(st.computed);
    out.f64(st.busy_s);
    out.f64(st.idle_s);
    delays_[w].save(out);
    if (saves_attempts_) {
      out.i64(s.attempt.attempts);
      out.boolean(s.attempt.abandoned);
      out.f64(s.attempt.delay_s);
      out.f64(s.attempt.offset_s);
    }
  }
  if (on_machine_) save_machine(out);
}

void EventSimulator::load(StateReader& in) {
  if (!in.tag("events")) return;
  now_ = in.f64();
  seq_ = in.u64();
  const std::uint64_t n = in.u64();
  // At most one pending event per worker plus the voided ones still queued: a bound that
  // keeps a corrupt count from growing the queue without end.
  if (n > 64 * state_.size() + 1024) in.fail("more pending events than workers could have");
  events_ = {};
  for (std::uint64_t i = 0; i < n && in.ok(); ++i) {
    Event e{};
    e.t = in.f64();
    e.seq = in.u64();
    const std::int64_t w = in.i64();
    if (w < 0 || w >= static_cast<std::int64_t>(state_.size())) in.fail("a worker out of range");
    e.worker = static_cast<int>(w);
    e.generation = in.u64();
    const std::uint64_t what = in.u64();
    if (what > static_cast<std::uint64_t>(Event::What::kPhaseEnd)) in.fail("an unknown event");
    e.what = static_cast<Event::What>(what);
    events_.push(e);
  }
  for (std::size_t w = 0; w < state_.size() && in.ok(); ++w) {
    WorkerState& s = state_[w];
    WorkerRecord& st = stats_[w];
    s.computing = in.boolean();
    s.generation = in.u64();
    s.started_at = in.f64();
    s.free_since = in.f64();
    st.computed = in.u64();
    st.busy_s = in.f64();
    st.idle_s = in.f64();
    delays_[w].load(in);
    if (saves_attempts_) {
      const std::int64_t attempts = in.i64();
      if (attempts < 1 || attempts > (std::int64_t{1} << 30)) in.fail("attempts out of range");
      s.attempt.attempts = static_cast<int>(attempts);
      s.attempt.abandoned = in.boolean();
      s.attempt.delay_s = in.f64();
      s.attempt.offset_s = in.f64();
    }
  }
  if (on_machine_ && in.ok()) load_machine(in);
  resumed_ = in.ok();
}

}  // namespace stalesgd
