// Hogwild! (Recht et al. 2011) for --server hogwild, async only: no server and no lock on the
// parameter path; P workers read and update one shared parameter vector in place.
#include "engine/hogwild_engine.hpp"

#include <sys/prctl.h>

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "engine/failure_ledger.hpp"
#include "output/checkpoint.hpp"
#include "util/fault_point.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {

void HogwildEngine::worker_main(Worker& me) {
  // Timer slack 1 ns: the default 50 us would bias every sleep of a delay-dominated run.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  try {
    worker_loop(me);
  } catch (...) {
    const CaughtFailure failure = caught_failure(fmt::format("worker {}", me.stats.worker));
    if (!failure.detail.empty()) ctx_.logger().debug("{}\n{}", failure.message, failure.detail);
    me.applying.store(false, std::memory_order_seq_cst);
    request_stop(StopReason::kFailed, {}, failure.message, failure.cause);
  }
}

void HogwildEngine::worker_loop(Worker& me) {
  fault_point("worker");
  auto last_end = resumed_from_;
  const PlannedFailure* planned = ctx_.run.failures().of(me.stats.worker);
  const auto fail_at =
      planned != nullptr
          ? start_ + std::chrono::duration_cast<Clock::duration>(Seconds(planned->at_s))
          : Clock::time_point::max();
  while (!stopping_.load(std::memory_order_relaxed)) {
    const auto t0 = Clock::now();
    if (t0 >= fail_at) return fail_worker(me, planned->kind);
    {
      std::lock_guard lock(me.mu);
      me.stats.idle_s += Seconds(t0 - last_end).count();  // the last update and its records
      ++me.stats.started;
    }
    const double x = me.delays.next(since_start(t0));
    me.due_ns.store(ns(t0) + static_cast<std::int64_t>(x * 1e9), std::memory_order_relaxed);
    const Batch batch = me.sampler.next();
    const std::uint64_t computed_on = version_.load(std::memory_order_relaxed);
    for (std::size_t i = 0; i < me.copy.size(); ++i) me.copy[i] = load(i);
    const auto loss = ctx_.model->loss_and_gradient(me.copy, batch, me.grad, *me.ws, &stopping_);
    // pad: the minibatch takes max(C, X); add: C + X.
    const auto x_d = std::chrono::duration_cast<Clock::duration>(Seconds(x));
    const auto until = o_.delay_mode == DelayMode::kPad ? t0 + x_d : Clock::now() + x_d;
    const bool on_time = loss && sleep_until(std::min(until, fail_at));
    last_end = Clock::now();
    {
      std::lock_guard lock(me.mu);
      if (loss) ++me.stats.computed;
      me.stats.busy_s += Seconds(last_end - t0).count();
    }
    if (on_time && (fail_at <= until || last_end >= fail_at)) {
      return fail_worker(me, planned->kind);
    }
    if (!on_time || !push(me, computed_on, *loss, Seconds(last_end - t0).count())) return;
  }
}

bool HogwildEngine::push(Worker& me, std::uint64_t computed_on, float loss, double duration_s) {
  me.applying.store(true, std::memory_order_seq_cst);
  const auto leave = [&](StopReason reason, std::string divergence = {}) {
    me.applying.store(false, std::memory_order_seq_cst);
    if (reason != StopReason::kNone) request_stop(reason, std::move(divergence));
    return false;
  };
  if (stopping_.load(std::memory_order_seq_cst)) return leave(StopReason::kNone);
  if (diverged(loss, ctx_.data.num_classes)) {
    // Named after the update it would produce, not claimed: that could leave a gap in updates.
    const std::uint64_t j = version_.load(std::memory_order_relaxed);
    const double lr = lr_rule_.rate({j, j - computed_on, 0.0});
    return leave(StopReason::kDiverged, divergence_error(j + 1, loss, me.stats.worker, lr).message);
  }
  const std::uint64_t j = version_.fetch_add(1, std::memory_order_relaxed);
  if (o_.iterations > 0 && j >= o_.iterations) return leave(StopReason::kIterations);  // spent
  const std::uint64_t staleness = j - computed_on;
  // The trained parameters: a model's state (its buffers, the tail) is folded with weight 1.
  const std::size_t trained = params_.size() - ctx_.model->num_state();
  double distance_sq = 0.0;
  if (lr_rule_.needs_distance()) {
    for (std::size_t i = 0; i < trained; ++i) {
      const double d = static_cast<double>(load(i)) - me.copy[i];
      distance_sq += d * d;
    }
  }
  const double lr = lr_rule_.rate({j, staleness, distance_sq});
  const auto step = static_cast<float>(lr);
  // Hogwild!'s update: a load and a store per element, not an atomic read-modify-write; a
  // concurrent store to the same element in between is lost, as the algorithm allows.
  for (std::size_t i = 0; i < params_.size(); ++i) {
    std::atomic_ref<float> wi(params_[i]);
    const float by = i < trained ? step * me.grad[i] : me.grad[i];
    wi.store(wi.load(std::memory_order_relaxed) - by, std::memory_order_relaxed);
  }
  const double now = since_start(Clock::now());
  {
    std::lock_guard lock(me.mu);
    me.updates.push_back({j + 1, now, 1, static_cast<double>(staleness), staleness, lr, loss});
    me.gradients.push_back({j + 1, me.stats.worker, computed_on, staleness, duration_s});
    ++me.stats.pushed;
    ++me.stats.applied;
    me.applied.store(me.stats.applied, std::memory_order_relaxed);
  }
  me.staleness_sum.store(me.staleness_sum.load(std::memory_order_relaxed) + staleness,
                         std::memory_order_relaxed);  // only this thread writes it
  // The last update of the budget ends the run at once, as the supervisor would.
  if (o_.iterations > 0 && j + 1 >= o_.iterations) return leave(StopReason::kIterations);
  me.applying.store(false, std::memory_order_seq_cst);
  return true;
}

Result<double> HogwildEngine::resume(RunSupervisor& supervisor, const std::string& payload) {
  restored_stats_.assign(static_cast<std::size_t>(o_.workers), WorkerRecord{});
  std::uint64_t n = 0;
  auto resumed = supervisor.resume(payload, "hogwild", [&](StateReader& in) {
    n = in.u64();
    auto params = in.values<float>(static_cast<std::int64_t>(params_.size()));
    if (in.ok()) params_ = std::move(params);
    for (auto& s : restored_stats_) {
      for (std::uint64_t* v : {&s.started, &s.computed, &s.pushed, &s.applied}) *v = in.u64();
      s.busy_s = in.f64();
      s.idle_s = in.f64();
      s.failed = in.boolean();
      s.failed_at_s = in.f64();
      s.failure = in.str();
    }
  });
  if (!resumed) return resumed.error();
  if (n != resumed->rows.updates.size()) {
    return Error{"checkpoint: the update count and records disagree"};
  }
  merged_ = std::move(resumed->rows);
  version_.store(n, std::memory_order_relaxed);  // no worker runs yet
  // Fresh delay and minibatch streams from here, as the thread engine's resume.
  stream_seed_ = mix64(o_.seed ^ mix64(merged_.updates.size()));
  return resumed->t;
}

Result<RunRecord> HogwildEngine::run() {
  RunSupervisor supervisor(ctx_, RunSupervisor::Evaluation::kBackground);
  stream_seed_ = o_.seed;
  double resumed_at = 0.0;
  if (ctx_.resume != nullptr) {
    auto t = resume(supervisor, *ctx_.resume);
    if (!t) return t.error();
    resumed_at = *t;
  }
  for (int w = 0; w < o_.workers; ++w) {
    workers_.push_back(std::make_unique<Worker>(ctx_, w, stream_seed_));
    Worker& me = *workers_.back();
    if (!restored_stats_.empty()) {
      me.stats = restored_stats_[static_cast<std::size_t>(w)];
      me.stats.worker = w;
      me.applied.store(me.stats.applied, std::memory_order_relaxed);
    }
  }
  std::vector<std::thread> threads;
  const auto join = [&] {
    for (auto& t : threads) t.join();
  };
  // A resumed run's clock goes on from the checkpoint's time.
  resumed_from_ = Clock::now();
  start_ = resumed_from_ - std::chrono::duration_cast<Clock::duration>(Seconds(resumed_at));
  std::pair<StopReason, double> ended;
  try {
    for (auto& w : workers_) threads.emplace_back([this, &w] { worker_main(*w); });
    ended = supervisor.supervise(*this, start_);
  } catch (...) {
    // A worker thread the system would not start, or the supervisor's exception: the run ends
    // failed with what it recorded, as on a worker's exception.
    const CaughtFailure failure = caught_failure(
        threads.size() < workers_.size() ? "starting the worker threads" : "the supervisor");
    request_stop(StopReason::kFailed, {}, failure.message, failure.cause);
    ended = {stop(StopReason::kFailed),
             std::chrono::duration<double>(Clock::now() - start_).count()};
  }
  join();
  auto [reason, wall_s] = ended;
  // Every thread is joined: params_ and the records are plain data again. The stop gate left
  // no gap, so every row is collected now.
  collect();
  RunRecord run;
  run.updates = std::move(merged_.updates);
  run.gradients = std::move(merged_.gradients);
  run.model = ctx_.model->describe();
  run.num_params = params_.size();
  run.param_buffers = 1 + workers_.size();  // the shared vector and each worker's copy
  std::uint64_t applied = 0;
  for (auto& w : workers_) {
    run.workers.push_back(w->stats);
    applied += w->stats.applied;
  }
  if (reason == StopReason::kDiverged) run.divergence = divergence_;
  if (!thread_failure_.empty()) {  // every thread is joined: no lock needed
    reason = StopReason::kFailed;
    run.stop_message = thread_failure_;
    mark_cause(run, failure_cause_);
  }
  // The failed workers, in the order they failed: their records and the stop's line.
  FailureLedger ledger(o_.workers, o_.worker_timeout_s);
  std::vector<std::pair<double, int>> failed;
  for (auto& rec : run.workers) {
    const double found = hang_found_s_[static_cast<std::size_t>(rec.worker)];
    if (found >= 0.0) {
      rec.failed = true;
      rec.failed_at_s = found;
      rec.failure = to_string(FailureKind::kHang);
    }
    if (rec.failed) failed.emplace_back(rec.failed_at_s, rec.worker);
  }
  std::sort(failed.begin(), failed.end());
  for (const auto& [at, w] : failed) {
    const auto& rec = run.workers[static_cast<std::size_t>(w)];
    ledger.record(w, at, rec.failure == "hang" ? FailureKind::kHang : FailureKind::kCrash);
  }
  if (reason == StopReason::kWorkersFailed)
    run.stop_message = ledger.stop_message(ctx_.run.rule(), 1, 0);
  return supervisor.finish(std::move(run), reason, wall_s, applied, params_);
}

Result<RunRecord> train_hogwild(RunContext& ctx) {
  HogwildEngine engine(ctx);
  return engine.run();
}

}  // namespace stalesgd
