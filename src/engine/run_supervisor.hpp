// RunSupervisor: what every engine leaves to one owner — when the run stops (a StopReason),
// when parameter snapshots are taken and evaluated, the progress line, and the final record.
// Engines only move gradients and time; they ask the supervisor whether to go on and hand it
// snapshots when it says one is due.
//
// Snapshot n is due at n * eval_every (no running sum, so no drift); one due at or past the
// time budget is left to the final snapshot, taken when the run ends. On the real clock a
// snapshot is recorded at the moment it was taken; on the virtual clock at its due time (the
// parameters do not change between events).
//
// Thread safety: one thread drives it (the supervisor loop of a real-clock engine, or the
// single thread of the virtual and sequential engines). Only stop_due() may be called from any
// thread (it reads the options and atomics): the thread engine's server checks the budgets with
// it after each update.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "engine/evaluator.hpp"
#include "engine/progress.hpp"
#include "engine/run_context.hpp"

namespace stalesgd {

// What a real-clock engine (threads, Hogwild!, MPI) shows the supervisor's loop.
class SupervisedEngine {
 public:
  using Clock = std::chrono::steady_clock;
  using Look = std::function<void(std::uint64_t version, std::span<const float> params)>;
  virtual ~SupervisedEngine() = default;
  // Blocks until `deadline` or until the engine ended the run itself (divergence, a failure);
  // returns that reason, or kNone.
  virtual StopReason wait_until(Clock::time_point deadline) = 0;
  // Calls `look` with the server's version and parameters at one instant.
  virtual void inspect(const Look& look) = 0;
  // Ends the run unless the engine ended it first; returns the reason that holds. No update is
  // recorded after it returns.
  virtual StopReason stop(StopReason reason) = 0;
  // The mean staleness so far (for the progress line).
  virtual double mean_staleness() = 0;
  // Failed workers (docs/rules.md, "Failed workers"): retires every worker whose minibatch is
  // --worker-timeout past its end without a gradient. An engine that cannot tell does nothing.
  virtual void watch(Clock::time_point /*now*/) {}
  // For the stall watchdog's message: the workers the server waits for, and for how long.
  virtual std::string stuck() { return {}; }
};

class RunSupervisor {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Evaluation {
    kBackground,  // real clock: snapshots evaluated on an idle-priority thread
    kInline,      // virtual clock: evaluated at once, so target-error stops are repeatable
  };

  RunSupervisor(RunContext& ctx, Evaluation evaluation);

  // The first stop condition met at time t (seconds since the start) with `iterations` updates
  // applied: the iteration or time budget, the target error, an interrupt. kNone: go on.
  StopReason stop_due(double t, std::uint64_t iterations) const;
  // When the next snapshot is due; +infinity once none is before the time budget.
  double next_snapshot_s() const;
  // Takes the due snapshot: `params` at version `iteration`, recorded at `at_s`.
  void snapshot(double at_s, std::uint64_t iteration, std::span<const float> params);
  // Redraws the progress line (at most twice a second; only on a terminal).
  void progress(double t, std::uint64_t iteration, double mean_staleness);

  // The real clock's loop, from `start` until a stop condition or the engine's own stop:
  // snapshots on time, the time budget to the microsecond, Ctrl-C polled every 100 ms, and
  // every 100 ms too the engine's watch for hung workers and the stall watchdog (kStalled).
  // Returns the reason and the training phase's length in seconds.
  std::pair<StopReason, double> supervise(SupervisedEngine& engine, Clock::time_point start);

  // Completes `run`: stop reason, wall seconds, the final snapshot of `params` (version
  // `iteration`) at `end_s`, every evaluation, time to target, the final parameters. A stall's
  // or the evaluator's failure goes into stop_message (an evaluator failure as kFailed).
  RunRecord finish(RunRecord run, StopReason reason, double end_s, std::uint64_t iteration,
                   std::span<const float> params);

 private:
  RunContext& ctx_;
  const TrainerOptions& o_;
  Evaluator evaluator_;
  ProgressLine progress_;
  std::uint64_t snapshots_ = 0;
  std::string stall_message_;  // set by supervise() when it stops a stalled run
};

}  // namespace stalesgd
