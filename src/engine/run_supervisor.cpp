// RunSupervisor: stop conditions, snapshot timing and the final record, for every engine.
#include "engine/run_supervisor.hpp"

#include <algorithm>
#include <limits>

#include "engine/stall_watchdog.hpp"

namespace stalesgd {

RunSupervisor::RunSupervisor(RunContext& ctx, Evaluation evaluation)
    : ctx_(ctx),
      o_(ctx.options),
      evaluator_(*ctx.model, ctx.data,
                 {evaluation == Evaluation::kBackground, o_.eval_test_samples,
                  o_.eval_train_samples, o_.target_error}),
      progress_(o_.progress) {}

StopReason RunSupervisor::stop_due(double t, std::uint64_t iterations) const {
  if (o_.iterations > 0 && iterations >= o_.iterations) return StopReason::kIterations;
  if (o_.time_s > 0.0 && t >= o_.time_s) return StopReason::kTime;
  if (evaluator_.target_reached()) return StopReason::kTargetError;
  if (ctx_.interrupted()) return StopReason::kInterrupted;
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
  const auto latest = evaluator_.latest();
  progress_.update(t, iteration, latest ? std::optional(latest->test_error) : std::nullopt,
                   mean_staleness);
}

std::pair<StopReason, double> RunSupervisor::supervise(SupervisedEngine& engine,
                                                       Clock::time_point start) {
  const auto since_start = [&](Clock::time_point t) {
    return std::chrono::duration<double>(t - start).count();
  };
  const auto at = [&](double s) {
    return start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  };
  StopReason reason = StopReason::kNone;
  StallWatchdog watchdog(o_.stall_timeout_s, start);
  for (;;) {
    const auto now = Clock::now();
    const double elapsed = since_start(now);
    engine.watch(now);  // hung workers (docs/rules.md, "Failed workers")
    std::uint64_t version = 0;
    engine.inspect([&](std::uint64_t v, std::span<const float> params) {
      version = v;
      reason = stop_due(elapsed, v);
      if (reason == StopReason::kNone && elapsed >= next_snapshot_s()) snapshot(elapsed, v, params);
    });
    if (reason == StopReason::kNone && watchdog.stalled(now, version)) {
      stall_message_ = watchdog.message(engine.stuck());
      reason = StopReason::kStalled;
    }
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
  return {reason, since_start(Clock::now())};
}

RunRecord RunSupervisor::finish(RunRecord run, StopReason reason, double end_s,
                                std::uint64_t iteration, std::span<const float> params) {
  progress_.clear();
  run.stop_reason = reason;
  run.wall_s = end_s;
  evaluator_.submit(end_s, iteration, params);
  run.evals = evaluator_.finish();
  if (reason == StopReason::kStalled && run.stop_message.empty()) run.stop_message = stall_message_;
  if (evaluator_.failed() && run.stop_message.empty()) {
    // A failed evaluation is a bug to report, whatever else ended the run.
    run.stop_reason = StopReason::kFailed;
    run.stop_message = evaluator_.failure();
  }
  run.final_params.assign(params.begin(), params.end());
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
