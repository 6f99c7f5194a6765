// What a run records: one row per server update, per applied gradient, per evaluation and per
// worker, plus the summary figures. Engines fill a RunRecord; output/run_writer writes it to
// --out (updates.csv, gradients.csv, evals.csv, workers.csv, summary.json).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "stalesgd/machine/machine.hpp"

namespace stalesgd {

// Why a run ended: the first budget reached, or what cut it short.
enum class StopReason {
  kNone,           // still running
  kIterations,     // --iterations updates applied
  kTime,           // --time elapsed
  kTargetError,    // a snapshot's test error reached --target-error
  kInterrupted,    // Ctrl-C or SIGTERM
  kDiverged,       // a non-finite minibatch loss (RunRecord::divergence says where)
  kFailed,         // an output write failed, or an exception in one of the run's threads
                   // (RunRecord::stop_message)
  kWorkersFailed,  // failed workers left the rule too few to go on (RunRecord::stop_message)
  kStalled,        // no update for --stall-timeout on the real clock (RunRecord::stop_message)
};
// "iterations", "time", "target-error", "interrupted", "diverged", "failed", "workers-failed",
// "stalled" (summary.json, results.csv).
const char* to_string(StopReason reason);

struct UpdateRecord {
  std::uint64_t iteration = 0;  // the version this update produced (1, 2, ...)
  double wall_s = 0.0;          // seconds since the run started
  int n_grads = 0;              // gradients summed (K)
  double mean_staleness = 0.0;
  std::uint64_t max_staleness = 0;
  double lr = 0.0;              // mean learning rate over the update's gradients
  double minibatch_loss = 0.0;  // mean minibatch loss of those gradients
  // --record-drift (else NaN): the mean over its stale gradients of |w_j - w_tau|^2, the
  // parameters it was applied to against those each was computed on (NaN when none was
  // stale), and the mean squared norm |g|^2 of its gradients.
  double drift_sq = std::numeric_limits<double>::quiet_NaN();
  double grad_sq = std::numeric_limits<double>::quiet_NaN();
};

struct GradientRecord {
  std::uint64_t iteration = 0;  // the update it went into
  int worker = 0;
  std::uint64_t computed_on = 0;  // version it was computed on
  std::uint64_t staleness = 0;    // (iteration - 1) - computed_on
  // Seconds from the minibatch's start (its assignment) to its push: compute plus delay as the
  // engine measured it (the virtual clock: as simulated). What `theory --fit` fits.
  double duration_s = 0.0;
};

struct EvalRecord {
  double wall_s = 0.0;
  std::uint64_t iteration = 0;
  double train_loss = 0.0;  // mean cross-entropy over the evaluation's training samples
  double test_loss = 0.0;
  double test_error = 0.0;
  // train_loss plus the model's L2 term (Model::l2_penalty): the objective the optimiser
  // minimises, on the same samples; equal to train_loss when l2 = 0.
  double train_objective = 0.0;
  // On the held-out split (--holdout); NaN (an empty field in evals.csv) without one.
  double val_loss = std::numeric_limits<double>::quiet_NaN();
  double val_error = std::numeric_limits<double>::quiet_NaN();
  // When its evaluation finished, on the run's clock (the virtual clock: wall_s): a row scored
  // while training went on has scored_s below the run's wall_s.
  double scored_s = 0.0;
  // The test and train samples it scored (the first ones of each split): the requested ones,
  // or fewer for an intermediate snapshot sized to keep up (docs/outputs.md).
  std::size_t test_samples = 0;
  std::size_t train_samples = 0;
};

struct WorkerRecord {
  int worker = 0;
  std::uint64_t started = 0;    // minibatches begun
  std::uint64_t computed = 0;   // gradients computed to the end (a minibatch cut before or
                                // during its compute has none)
  std::uint64_t pushed = 0;     // gradients that reached the server
  std::uint64_t applied = 0;    // gradients that went into an update
  std::uint64_t cancelled = 0;  // interrupted, or discarded by the server as stale
  double busy_s = 0.0;          // computing or sitting out its injected delay
  double idle_s = 0.0;          // waiting for the server (a reply or the next update)
  // Failed workers (docs/rules.md, "Failed workers"): when the server learned of it (a crash
  // at once, a hang --worker-timeout after its minibatch was due), and how: "crash" or "hang".
  bool failed = false;
  double failed_at_s = 0.0;
  std::string failure;
};

// A rank of --engine mpi (docs/distributed.md): where it ran, how its clock was tied to rank
// 0's, and whether it went quiet. RunRecord::ranks is empty for the other engines.
struct RankRecord {
  int rank = 0;
  std::string host;
  int first_worker = 0;          // its workers: first_worker .. first_worker + workers - 1
  int workers = 0;               // rank 0, the server, has none
  double clock_offset_s = 0.0;   // its steady clock minus rank 0's
  double clock_error_s = 0.0;    // |true offset - clock_offset_s| <= this; 0: rank 0's host, exact
  bool clock_estimated = false;  // by ping-pong (another host)
  // Silences: spans in which a minibatch of the rank was more than a second past its end and
  // nothing came from the rank (its link down, the rank stopped): how many, the longest.
  int silences = 0;
  double longest_silence_s = 0.0;
  bool answered = true;  // it answered the end of the run with its records
};

struct RunRecord {
  std::vector<UpdateRecord> updates;
  std::vector<GradientRecord> gradients;
  std::vector<EvalRecord> evals;
  std::vector<WorkerRecord> workers;
  std::vector<RankRecord> ranks;  // --engine mpi: rank 0 first
  double wall_s = 0.0;            // length of the training phase
  // Real clock: seconds from the end of training to the last row scored (the final snapshot and
  // the backlog left then); 0 on the virtual clock.
  double scoring_tail_s = 0.0;
  // When this process started (or resumed) the run's clock, for summary.json's provenance.
  std::chrono::system_clock::time_point clock_started{};
  StopReason stop_reason = StopReason::kNone;
  std::string divergence;         // with "diverged": the iteration, the loss and the likely fix
  std::string stop_message;       // with "failed", "workers-failed", "stalled": one line saying why
  bool output_failed = false;     // with "failed": an output write failed (not a bug in a thread)
  bool model_failed = false;      // with "failed": the model itself failed (a user's module)
  bool resources_failed = false;  // with "failed": memory or threads ran out (the machine's limit)
  std::size_t evals_skipped = 0;  // snapshots skipped while the evaluation backlog was full
  std::optional<double> time_to_target_s;  // first snapshot with test error <= target
  // The virtual clock's machine as modelled (messages sized, --server-time auto measured);
  // nullopt on the free machine and the real clock (docs/machine.md).
  std::optional<Machine> machine;
  // --partition: each worker's training samples per class (empty: every worker samples all).
  std::vector<std::vector<std::size_t>> shards;
  std::size_t param_buffers = 0;  // parameter versions held at the peak (memory)
  std::size_t num_params = 0;
  std::size_t eval_test_samples = 0;   // test samples each evaluation used
  std::size_t eval_train_samples = 0;  // training samples of each evaluation's train loss
  std::string model;                   // Model::describe()
  std::string run_id;                  // drawn when the run started, the same through every resume
  std::vector<float> final_params;     // the parameters when training stopped
};

// Summary statistics derived from a RunRecord.
struct StalenessStats {
  double mean = 0.0;
  double p95 = 0.0;
  std::uint64_t max = 0;
};
StalenessStats staleness_stats(const RunRecord& run);
// Minibatch counts summed over the workers.
struct GradientTotals {
  std::uint64_t started = 0;
  std::uint64_t computed = 0;
  std::uint64_t pushed = 0;
  std::uint64_t applied = 0;
  std::uint64_t cancelled = 0;
};
GradientTotals gradient_totals(const RunRecord& run);
// Mean seconds per iteration: wall time of the last update / its iteration.
double seconds_per_iteration(const RunRecord& run);

}  // namespace stalesgd
