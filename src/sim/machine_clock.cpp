// EventSimulator on a machine that is not free (stalesgd/machine/machine.hpp, docs/machine.md):
// each minibatch goes link out, compute on the shared cores with its delay beside (pad) or after
// (add), link in, the server's queue; the server takes gradients in one at a time and applies
// updates, its work on the same cores. On a memory link a message is its latency and then a copy
// on the cores by the receiver: the worker's before its compute, the server's before it takes
// the gradient in. The cores are processor-shared: with A jobs on N cores
// each runs at min(1, N / A), so a job is done when the service every job has attained since
// t = 0 (`served_`) reaches its target. The free machine never comes here (its histories are
// the event_simulator.cpp ones, byte for byte).
#include <algorithm>

#include "sim/event_simulator.hpp"

namespace stalesgd {

double EventSimulator::server_busy_s() const {
  return busy_s_ + (server_ != Server::kIdle ? now_ - busy_since_ : 0.0);
}

double EventSimulator::cpu_rate() const {
  if (machine_.cores == 0) return 1.0;
  const double share =
      cpu_active_ <= machine_.cores ? 1.0 : static_cast<double>(machine_.cores) / cpu_active_;
  if (machine_.contention <= 1.0 || machine_.contention_cores <= 1) return share;
  // Busy cores slow each other down (stalesgd/machine/machine.hpp).
  const int busy = std::min({cpu_active_, machine_.cores, machine_.contention_cores});
  const double slow =
      1.0 + (machine_.contention - 1.0) * (busy - 1) / (machine_.contention_cores - 1);
  return share / slow;
}

void EventSimulator::cpu_start(int worker, std::uint64_t generation, double work) {
  cpu_.push({served_ + work, seq_++, worker, generation});
  ++cpu_active_;
}

double EventSimulator::next_cpu_done() {
  while (!cpu_.empty()) {
    const CpuJob& j = cpu_.top();
    if (j.worker < 0 || state_[static_cast<std::size_t>(j.worker)].generation == j.generation) {
      return now_ + std::max(0.0, j.target - served_) / cpu_rate();
    }
    cpu_.pop();  // a cut worker's compute: it left the cores when it was cut
  }
  return kNever;
}

// Both ends of a worker's link: its own bandwidth, and the server's side, which every worker's
// message crosses in turn (the S shards' links side by side).
double EventSimulator::transfer(double& nic_free) {
  const Link& link = machine_.link;
  const double bytes = machine_.message_bytes();
  if (link.bandwidth_bps <= 0.0 || link.memory) return now_ + link.latency_s;
  const double own = 8.0 * bytes / link.bandwidth_bps;
  nic_free = std::max(now_, nic_free) + own / machine_.shards;
  return std::max(now_ + own, nic_free) + link.latency_s;
}

double EventSimulator::copy_s() const {
  return machine_.link.memory ? machine_.link.copy_seconds(machine_.message_bytes()) : 0.0;
}

void EventSimulator::timer(double at, int w) {
  events_.push(
      {at, seq_++, w, state_[static_cast<std::size_t>(w)].generation, Event::What::kPhaseEnd});
}

void EventSimulator::start_on_machine(int w, double x) {
  auto& s = state_[static_cast<std::size_t>(w)];
  s.delay_x = x;
  if (machine_.link.free()) return begin_compute(w);
  s.phase = Phase::kDownload;
  timer(transfer(nic_out_free_), w);
}

void EventSimulator::begin_compute(int w) {
  auto& s = state_[static_cast<std::size_t>(w)];
  s.phase = Phase::kCompute;
  s.sleep_until = now_ + s.delay_x;
  const double work = compute_s_ + copy_s();
  if (work <= 0.0) return compute_done(w);
  cpu_start(w, s.generation, work);
}

void EventSimulator::compute_done(int w) {
  auto& s = state_[static_cast<std::size_t>(w)];
  const double until = mode_ == DelayMode::kPad ? s.sleep_until : now_ + s.delay_x;
  if (until > now_) {
    s.phase = Phase::kSleep;
    return timer(until, w);
  }
  begin_upload(w);
}

void EventSimulator::begin_upload(int w) {
  auto& s = state_[static_cast<std::size_t>(w)];
  if (machine_.link.free()) return at_server(w);
  s.phase = Phase::kUpload;
  timer(transfer(nic_in_free_), w);
}

void EventSimulator::at_server(int w) {
  auto& s = state_[static_cast<std::size_t>(w)];
  s.phase = Phase::kQueued;
  queue_.push_back({w, s.generation});
}

void EventSimulator::serve_next() {
  while (server_ == Server::kIdle && !queue_.empty()) {
    const Queued q = queue_.front();
    queue_.pop_front();
    if (state_[static_cast<std::size_t>(q.worker)].generation != q.generation) continue;  // cut
    server_ = Server::kGradient;
    busy_since_ = now_;
    serving_ = q.worker;
    // Through the cores even when it takes no time, so that the run loop sees every arrival.
    cpu_start(-1, 0, (machine_.server_gradient_s + copy_s()) / machine_.shards);
  }
}

// The server has taken worker serving_'s gradient in (kGradient) or applied the update it led
// to (kUpdate).
Status EventSimulator::server_done(Callbacks& callbacks) {
  if (server_ == Server::kGradient) {
    const int w = serving_;
    auto& s = state_[static_cast<std::size_t>(w)];
    auto& st = stats_[static_cast<std::size_t>(w)];
    s.computing = false;
    s.phase = Phase::kIdle;
    s.free_since = now_;
    st.busy_s += now_ - s.started_at;
    ++st.computed;
    auto step = callbacks.on_arrival(now_, w);
    if (!step) return step.error();
    const double work = machine_.server_update_s / machine_.shards;
    if (step->decision.apply && work > 0.0) {
      after_.assign(step->start.begin(), step->start.end());
      server_ = Server::kUpdate;
      cpu_start(-1, 0, work);
      return {};
    }
    carry_out(*step, callbacks);
  } else {
    carry_out({Decision{}, after_}, callbacks);
  }
  server_ = Server::kIdle;
  busy_s_ += now_ - busy_since_;
  return {};
}

Status EventSimulator::run_on_machine(Callbacks& callbacks) {
  while (true) {
    serve_next();
    while (!events_.empty()) {  // drop the cut workers' timers and arrivals
      const Event& e = events_.top();
      if (e.what == Event::What::kCrash ||
          e.generation == state_[static_cast<std::size_t>(e.worker)].generation) {
        break;
      }
      events_.pop();
    }
    const double t_event = events_.empty() ? kNever : events_.top().t;
    const double t_cpu = next_cpu_done();
    if (t_event == kNever && t_cpu == kNever) return {};
    const bool cpu = t_cpu < t_event;
    const double t = cpu ? t_cpu : t_event;
    if (!callbacks.before_event(t)) return {};
    served_ += (t - now_) * cpu_rate();
    now_ = t;
    if (cpu) {
      const CpuJob job = cpu_.top();
      cpu_.pop();
      --cpu_active_;
      served_ = std::max(served_, job.target);  // rounding: it is done now
      if (job.worker < 0) {
        if (auto s = server_done(callbacks); !s) return s;
      } else {
        compute_done(job.worker);
      }
      continue;
    }
    const Event e = events_.top();
    events_.pop();
    if (e.what == Event::What::kCrash || e.what == Event::What::kHangFound) {
      if (auto failed = fail(e, callbacks); !failed) return failed;
      continue;
    }
    switch (state_[static_cast<std::size_t>(e.worker)].phase) {
      case Phase::kDownload:
        begin_compute(e.worker);
        break;
      case Phase::kSleep:
        begin_upload(e.worker);
        break;
      case Phase::kUpload:
        at_server(e.worker);
        break;
      default:
        break;
    }
  }
}

void EventSimulator::save_machine(StateWriter& out) const {
  out.tag("machine");
  for (const WorkerState& s : state_) {
    out.u64(static_cast<std::uint64_t>(s.phase));
    out.f64(s.delay_x);
    out.f64(s.sleep_until);
  }
  auto jobs = cpu_;
  out.u64(jobs.size());
  for (; !jobs.empty(); jobs.pop()) {
    out.f64(jobs.top().target);
    out.u64(jobs.top().seq);
    out.i64(jobs.top().worker);
    out.u64(jobs.top().generation);
  }
  out.i64(cpu_active_);
  out.f64(served_);
  out.u64(queue_.size());
  for (const Queued& q : queue_) {
    out.i64(q.worker);
    out.u64(q.generation);
  }
  out.u64(static_cast<std::uint64_t>(server_));
  out.i64(serving_);
  out.u64(after_.size());
  for (const auto& a : after_) {
    out.i64(a.worker);
    out.boolean(a.cut);
  }
  out.f64(nic_out_free_);
  out.f64(nic_in_free_);
  out.f64(busy_s_);
  out.f64(busy_since_);
}

void EventSimulator::load_machine(StateReader& in) {
  if (!in.tag("machine")) return;
  const auto workers = static_cast<std::int64_t>(state_.size());
  const auto worker = [&](std::int64_t w, bool server_too) {
    if (w < (server_too ? -1 : 0) || w >= workers) in.fail("a worker out of range");
    return static_cast<int>(w);
  };
  const auto count = [&](std::uint64_t n) {
    if (n > 64 * state_.size() + 1024) in.fail("more queued work than workers could have");
    return in.ok() ? n : 0;
  };
  for (WorkerState& s : state_) {
    const std::uint64_t phase = in.u64();
    if (phase > static_cast<std::uint64_t>(Phase::kQueued)) in.fail("an unknown phase");
    s.phase = static_cast<Phase>(phase);
    s.delay_x = in.f64();
    s.sleep_until = in.f64();
  }
  cpu_ = {};
  for (std::uint64_t i = 0, n = count(in.u64()); i < n && in.ok(); ++i) {
    CpuJob j{};
    j.target = in.f64();
    j.seq = in.u64();
    j.worker = worker(in.i64(), true);
    j.generation = in.u64();
    cpu_.push(j);
  }
  cpu_active_ = static_cast<int>(in.i64());
  served_ = in.f64();
  queue_.clear();
  for (std::uint64_t i = 0, n = count(in.u64()); i < n && in.ok(); ++i) {
    const int w = worker(in.i64(), false);
    queue_.push_back({w, in.u64()});
  }
  const std::uint64_t server = in.u64();
  if (server > static_cast<std::uint64_t>(Server::kUpdate)) in.fail("an unknown server state");
  server_ = static_cast<Server>(server);
  serving_ = worker(in.i64(), true);
  after_.clear();
  for (std::uint64_t i = 0, n = count(in.u64()); i < n && in.ok(); ++i) {
    const int w = worker(in.i64(), false);
    after_.push_back({w, in.boolean()});
  }
  nic_out_free_ = in.f64();
  nic_in_free_ = in.f64();
  busy_s_ = in.f64();
  busy_since_ = in.f64();
}

}  // namespace stalesgd
