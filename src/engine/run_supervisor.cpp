// RunSupervisor: stop conditions, snapshot timing and the final record, for every engine.
#include "engine/run_supervisor.hpp"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "engine/stall_watchdog.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {
namespace {

// The share of a core the evaluator's catch-up thread gets beside the run's threads that may
// compute flat out (the workers, one for the sequential trainer, and --server thread's server):
// the scheduler's fair share, at most one core.
double catch_up_share(const TrainerOptions& o) {
  cpu_set_t set;
  CPU_ZERO(&set);
  int cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
  if (cores <= 0) cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int busy = o.sequential ? 1 : o.workers + (o.server == ServerPlacement::kThread ? 1 : 0);
  return std::min(1.0, static_cast<double>(cores) / static_cast<double>(busy + 1));
}

EvaluatorOptions evaluator_options(const TrainerOptions& o, RunSupervisor::Evaluation evaluation) {
  EvaluatorOptions e;
  e.background = evaluation == RunSupervisor::Evaluation::kBackground;
  e.test_samples = o.eval_test_samples;
  e.train_samples = o.eval_train_samples;
  e.target_error = o.target_error;
  e.eval_every_s = o.eval_every_s;
  e.sizing = e.background && o.eval_sizing;
  e.share = catch_up_share(o);
  return e;
}

// 16 hex digits from the OS's entropy: a run's identity in its checkpoint and summary.json.
std::string draw_run_id() {
  std::random_device rd;
  const std::uint64_t id = (std::uint64_t{rd()} << 32) ^ rd();
  return fmt::format("{:016x}", id);
}

}  // namespace

RunSupervisor::RunSupervisor(RunContext& ctx, Evaluation evaluation)
    : ctx_(ctx),
      o_(ctx.options),
      evaluator_(*ctx.model, ctx.data, evaluator_options(o_, evaluation)),
      background_(evaluation == Evaluation::kBackground),
      progress_(ctx.progress),
      started_(Clock::now()),
      journal_(ctx.journal),
      next_checkpoint_s_(o_.checkpoint_every_s),
      run_id_(draw_run_id()) {
  if (const auto st = evaluator_.stats(); !(st.sized_plan == st.full)) {
    ctx_.logger().debug(
        "evaluation: {:.3g} ms of a core a sample, {:.3g} s for {} test + {} train samples; once "
        "behind, intermediate snapshots on {} test + {} train samples",
        1e3 * st.sample_cost_s,
        st.sample_cost_s * static_cast<double>(st.full.test + st.full.train), st.full.test,
        st.full.train, st.sized_plan.test, st.sized_plan.train);
  }
}

void RunSupervisor::start_clock(Clock::time_point start) {
  clock_start_ = start;
  clock_started_at_ = std::chrono::system_clock::now();
  evaluator_.start_clock(start);
}

StopReason RunSupervisor::stop_due(double t, std::uint64_t iterations) const {
  if (o_.iterations > 0 && iterations >= o_.iterations) return StopReason::kIterations;
  if (o_.time_s > 0.0 && t >= o_.time_s) return StopReason::kTime;
  if (evaluator_.target_reached()) return StopReason::kTargetError;
  if (ctx_.interrupted()) return StopReason::kInterrupted;
  if (io_failed_.load(std::memory_order_relaxed)) return StopReason::kFailed;
  if (ctx_.run_log != nullptr && ctx_.run_log->failed()) return StopReason::kFailed;  // finish()
  if (evaluator_.failed()) return StopReason::kFailed;  // its message: finish()
  return StopReason::kNone;
}

double RunSupervisor::next_snapshot_s() const {
  const double due = static_cast<double>(snapshots_) * o_.eval_every_s;
  if (o_.time_s > 0.0 && due >= o_.time_s) return std::numeric_limits<double>::infinity();
  return due;
}

void RunSupervisor::snapshot(double at_s, std::uint64_t iteration, std::span<const float> params) {
  evaluator_.submit(at_s, iteration, params);
  ++snapshots_;
}

void RunSupervisor::progress(double t, std::uint64_t iteration, double mean_staleness) {
  if (progress_ == nullptr) return;
  const auto now = Clock::now();
  if (now < next_progress_) return;
  next_progress_ = now + std::chrono::milliseconds(100);
  ProgressSample s;
  s.t_s = t;
  s.wall_s = std::chrono::duration<double>(now - started_).count();
  s.iteration = iteration;
  // The budget that will end the run first is the one furthest along.
  if (o_.time_s > 0.0) s.budget = t / o_.time_s;
  if (o_.iterations > 0) {
    s.budget = std::max(s.budget.value_or(0.0),
                        static_cast<double>(iteration) / static_cast<double>(o_.iterations));
  }
  if (s.budget) s.budget = std::clamp(*s.budget, 0.0, 1.0);
  if (const auto latest = evaluator_.latest()) s.test_error = latest->test_error;
  s.mean_staleness = mean_staleness;
  progress_->update(s);
}

void RunSupervisor::log_snapshot(const EvalRecord& e) const {
  ctx_.logger().debug("snapshot at {:.3f} s, iteration {}: test error {:.4f}, train loss {:.4f}",
                      e.wall_s, e.iteration, e.test_error, e.train_loss);
}

void RunSupervisor::journal_failed(const Error& error) {
  if (io_error_.empty()) io_error_ = error.message;
  io_failed_.store(true, std::memory_order_relaxed);
}

void RunSupervisor::write_staged() {
  if (journal_ == nullptr || !io_error_.empty()) return;
  Status s = journal_->append(staged_updates_);
  if (s) s = journal_->append(staged_gradients_);
  if (o_.checkpoint_every_s > 0.0) {
    journaled_.updates.insert(journaled_.updates.end(), staged_updates_.begin(),
                              staged_updates_.end());
    journaled_.gradients.insert(journaled_.gradients.end(), staged_gradients_.begin(),
                                staged_gradients_.end());
  }
  staged_updates_.clear();
  staged_gradients_.clear();
  if (s) {
    const auto evals = evaluator_.ready(evals_seen_);
    evals_seen_ += evals.size();
    for (const auto& e : evals) log_snapshot(e);
    s = journal_->append(evals);
  }
  if (!s) journal_failed(s.error());
}

void RunSupervisor::stage(const RunRecord& run) {
  if (journal_ == nullptr) return;
  staged_updates_.insert(staged_updates_.end(),
                         run.updates.begin() + static_cast<std::ptrdiff_t>(updates_seen_),
                         run.updates.end());
  staged_gradients_.insert(staged_gradients_.end(),
                           run.gradients.begin() + static_cast<std::ptrdiff_t>(gradients_seen_),
                           run.gradients.end());
  updates_seen_ = run.updates.size();
  gradients_seen_ = run.gradients.size();
}

void RunSupervisor::journal(const RunRecord& run) {
  if (journal_ == nullptr) return;
  // Single-threaded engines call this at every step: write a few times a second.
  const auto now = Clock::now();
  if (now < next_journal_) return;
  next_journal_ = now + std::chrono::milliseconds(100);
  stage(run);
  write_staged();
}

std::pair<StopReason, double> RunSupervisor::supervise(SupervisedEngine& engine,
                                                       Clock::time_point start) {
  const auto since_start = [&](Clock::time_point t) {
    return std::chrono::duration<double>(t - start).count();
  };
  const auto at = [&](double s) {
    return start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  };
  start_clock(start);
  StopReason reason = StopReason::kNone;
  // From now, not from `start`: a resumed run's start lies back at its first start.
  StallWatchdog watchdog(o_.stall_timeout_s, Clock::now());
  for (;;) {
    const auto now = Clock::now();
    const double elapsed = since_start(now);
    engine.watch(now);  // hung workers (docs/rules.md, "Failed workers")
    std::uint64_t version = 0;
    engine.inspect([&](std::uint64_t v, std::span<const float> params, const RunRecord* run) {
      version = v;
      // Only copies under the engine's lock; the rows are written after it is released.
      if (run != nullptr) stage(*run);
      reason = stop_due(elapsed, v);
      if (reason == StopReason::kNone && elapsed >= next_snapshot_s()) snapshot(elapsed, v, params);
    });
    write_staged();
    if (reason == StopReason::kNone && watchdog.stalled(now, version)) {
      stall_message_ = watchdog.message(engine.stuck());
      ctx_.logger().debug("stall watchdog: {}", stall_message_);
      reason = StopReason::kStalled;
    }
    if (reason == StopReason::kNone && checkpoint_due(elapsed)) save_checkpoint(engine, start);
    if (reason != StopReason::kNone) {
      reason = engine.stop(reason);
      break;
    }
    if (elapsed < next_snapshot_s()) progress(elapsed, version, engine.mean_staleness());
    auto deadline = now + std::chrono::milliseconds(100);  // Ctrl-C poll
    const double due = next_snapshot_s();
    if (due <= elapsed) continue;  // another snapshot is already due
    if (due < std::numeric_limits<double>::infinity()) deadline = std::min(deadline, at(due));
    if (o_.time_s > 0.0) deadline = std::min(deadline, at(o_.time_s));
    if (auto own = engine.wait_until(deadline); own != StopReason::kNone) {
      reason = engine.stop(own);
      break;
    }
  }
  const double end = since_start(Clock::now());
  // Ctrl-C or SIGTERM: a checkpoint at the stop, so that --resume goes on from here.
  if (reason == StopReason::kInterrupted && o_.checkpoint_every_s > 0.0 && journal_ != nullptr) {
    save_checkpoint(engine, start);
  }
  return {reason, end};
}

RunRecord RunSupervisor::finish(RunRecord run, StopReason reason, double end_s,
                                std::uint64_t iteration, std::span<const float> params) {
  if (progress_ != nullptr) progress_->done();
  run.run_id = run_id_;
  run.stop_reason = reason;
  run.wall_s = end_s;
  evaluator_.submit(end_s, iteration, params, /*final=*/true);
  run.evals = evaluator_.finish(ctx_.interrupt);
  run.clock_started = clock_started_at_;
  if (background_ && clock_start_) {
    // Every row is in and the evaluator's threads are joined: the tail is all of it.
    const double now = std::chrono::duration<double>(Clock::now() - *clock_start_).count();
    run.scoring_tail_s = std::max(0.0, now - end_s);
  }
  // The journal logged the snapshots it wrote; without one they are logged here, at the end.
  for (std::size_t i = journal_ != nullptr ? evals_seen_ : 0; i < run.evals.size(); ++i) {
    log_snapshot(run.evals[i]);
  }
  run.evals_skipped = evaluator_.skipped();
  if (reason == StopReason::kFailed && run.stop_message.empty()) {
    // A failed write ends the run the same way whichever file it was (docs/reliability.md).
    const std::string failure = !io_error_.empty()        ? io_error_
                                : ctx_.run_log != nullptr ? ctx_.run_log->failure()
                                                          : std::string();
    if (!failure.empty()) {
      run.stop_message = failure;
      run.output_failed = true;
    }
  }
  if (reason == StopReason::kStalled && run.stop_message.empty()) run.stop_message = stall_message_;
  if (evaluator_.failed() && run.stop_message.empty()) {
    // A failed evaluation ends the run failed, whatever else ended it: a bug (exit 3), or the
    // user's module failing in eval mode (exit 1, its traceback in run.log).
    run.stop_reason = StopReason::kFailed;
    run.stop_message = evaluator_.failure();
    mark_cause(run, evaluator_.failure_cause());
    if (const auto detail = evaluator_.failure_detail(); !detail.empty()) {
      ctx_.logger().debug("{}\n{}", run.stop_message, detail);
    }
  }
  run.final_params.assign(params.begin(), params.end());
  const auto used = [](std::size_t asked, std::size_t count) {
    return asked == 0 ? count : std::min(asked, count);
  };
  run.eval_test_samples = used(o_.eval_test_samples, ctx_.data.test.count);
  run.eval_train_samples = used(o_.eval_train_samples, ctx_.data.train.count);
  if (o_.target_error > 0.0) {
    for (const auto& e : run.evals) {
      if (e.test_error <= o_.target_error) {
        run.time_to_target_s = e.wall_s;
        break;
      }
    }
  }
  return run;
}

}  // namespace stalesgd
