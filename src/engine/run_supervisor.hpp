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

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/evaluator.hpp"
#include "engine/run_context.hpp"
#include "output/checkpoint.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {

// What a real-clock engine (threads, Hogwild!, MPI) shows the supervisor's loop.
class SupervisedEngine {
 public:
  using Clock = std::chrono::steady_clock;
  // `run`: the records so far, or null for an engine whose records are merged only at the end
  // (Hogwild!: each thread keeps its own).
  using Look = std::function<void(std::uint64_t version, std::span<const float> params,
                                  const RunRecord* run)>;
  virtual ~SupervisedEngine() = default;
  // Blocks until `deadline` or until the engine ended the run itself (divergence, a failure);
  // returns that reason, or kNone.
  virtual StopReason wait_until(Clock::time_point deadline) = 0;
  // Calls `look` with the server's version and parameters at one instant.
  virtual void inspect(const Look& look) = 0;
  // Ends the run unless the engine ended it first; returns the reason that holds. No update is
  // recorded after it returns.
  virtual StopReason stop(StopReason reason) = 0;
  // Writes the engine's part of a checkpoint (docs/reliability.md) and calls `look`, both at
  // one instant, so that the state and the records the look stages agree. The CLI refuses
  // --checkpoint-every for an engine that cannot (Hogwild!, MPI), so reaching this is a bug.
  virtual void save(StateWriter& /*out*/, const Look& /*look*/) {
    throw std::logic_error("this engine cannot write checkpoints");
  }
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
  // The run's clock started at `start` (a resumed run's lies back): rows' scored_s and the
  // scoring tail are read on it. supervise() calls it; a single-threaded engine on the real
  // clock calls it before its first snapshot.
  void start_clock(Clock::time_point start);
  // Reports how far the run is to the run's ProgressSink, if any, at most ten times a second.
  void progress(double t, std::uint64_t iteration, double mean_staleness);
  // Appends the rows of `run` not yet in the journal, and the evaluations done since (a no-op
  // without --out). A write that fails ends the run: stop_due() says kFailed from then on.
  void journal(const RunRecord& run);

  // The real clock's loop, from `start` until a stop condition or the engine's own stop:
  // snapshots on time, the time budget to the microsecond, Ctrl-C polled every 100 ms, and
  // every 100 ms too the engine's watch for hung workers and the stall watchdog (kStalled).
  // Returns the reason and the training phase's length in seconds.
  std::pair<StopReason, double> supervise(SupervisedEngine& engine, Clock::time_point start);

  // --checkpoint-every: whether one is due at time t. The engine then saves its part and calls
  // checkpoint() (single-threaded engines; supervise() does it for the real-clock ones).
  bool checkpoint_due(double t) const;
  // Writes checkpoint.bin for time t: the journal is brought up to date with `run` (all of it,
  // now), then the shared part and `engine_state` are written atomically. A failure ends the
  // run as a failed journal write does.
  void checkpoint(double t, const RunRecord& run, const std::string& engine_state);
  // --resume, the one prologue of every engine: restores the part of the checkpoint's
  // `payload` every engine shares (its snapshots, evaluations and records), checks the engine's
  // tag and hands `engine_part` the rest, which must read it to the end. Returns the records
  // (the engine continues them) and the run's clock at the checkpoint. Call before anything else.
  struct Resumed {
    RunRecord rows;
    double t = 0.0;
  };
  Result<Resumed> resume(const std::string& payload, std::string_view engine,
                         const std::function<void(StateReader&)>& engine_part);

  // Completes `run`: stop reason, wall seconds, the final snapshot of `params` (version
  // `iteration`) at `end_s`, every evaluation, time to target, the final parameters. A stall's
  // or the evaluator's failure goes into stop_message (an evaluator failure as kFailed).
  RunRecord finish(RunRecord run, StopReason reason, double end_s, std::uint64_t iteration,
                   std::span<const float> params);

 private:
  // Appends the staged rows (copied under the engine's lock by supervise()) to the journal.
  void write_staged();
  // Copies the rows of `run` not yet staged.
  void stage(const RunRecord& run);
  // A real-clock checkpoint: the engine's state, its records and the run's clock (read from
  // `start`) at one instant, under the engine's lock, so no record is later than the clock.
  void save_checkpoint(SupervisedEngine& engine, Clock::time_point start);
  // The common part of checkpoint() once the journal holds every row up to time t.
  void write_checkpoint(double t, const std::string& engine_state);
  void journal_failed(const Error& error);
  // The shared part of resume(): snapshots and evaluations of `header`; returns its records.
  RunRecord restore(const CheckpointHeader& header);
  // One debug line in the run's log for an evaluated snapshot (-v, run.log).
  void log_snapshot(const EvalRecord& e) const;

  RunContext& ctx_;
  const TrainerOptions& o_;
  Evaluator evaluator_;
  bool background_;  // the real clock's evaluation: a scoring tail to measure
  std::optional<Clock::time_point> clock_start_;            // start_clock()'s
  std::chrono::system_clock::time_point clock_started_at_;  // when start_clock() was called
  ProgressSink* progress_;                                  // null: nobody watches
  Clock::time_point started_;                               // for the progress's wall seconds
  Clock::time_point next_progress_{};
  RunJournal* journal_;  // null: no --out
  std::vector<UpdateRecord> staged_updates_;
  std::vector<GradientRecord> staged_gradients_;
  RunRecord journaled_;  // with --checkpoint-every: every row written, for the checkpoints
  double next_checkpoint_s_ = 0.0;
  std::uint64_t updates_seen_ = 0, gradients_seen_ = 0, evals_seen_ = 0;
  Clock::time_point next_journal_{};  // journal(): when it writes again
  std::string io_error_;              // the journal's failure (the supervisor's thread only)
  // Set once by the supervisor's thread when the journal fails; read by stop_due() from any
  // thread. Relaxed: it carries no data (the message stays with the supervisor's thread).
  std::atomic<bool> io_failed_{false};
  std::uint64_t snapshots_ = 0;
  std::string stall_message_;  // set by supervise() when it stops a stalled run
  std::string run_id_;         // drawn at the start, the checkpoint's after a resume
};

}  // namespace stalesgd
