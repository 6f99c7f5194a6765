// Evaluator: evaluates parameter snapshots taken during training (test loss and error, train
// loss on a subset, loss and error on the held-out split when there is one) so that the curve
// is scored while the run goes on, at little cost to the run it measures (docs/outputs.md,
// "Evaluation while training").
//
// Background mode (the real clock) has two threads. The idle thread runs at SCHED_IDLE: it
// scores the oldest snapshot only with cores training leaves idle (workers sleeping out their
// delays). The catch-up thread runs at normal priority and sleeps while the evaluator keeps up;
// once it is behind (a snapshot has waited longer than one eval_every, or two wait) it scores
// the oldest snapshots at its fair share of a core beside the workers, taking over the one the
// idle thread has begun from the blocks it has done, until none waits. Two threads rather than
// one that changes its policy: a thread without CAP_SYS_NICE may enter SCHED_IDLE but never
// leave it (sched(7)). A snapshot is scored in blocks of eval_batch samples whose sums are added
// in order, so whichever thread scores which block the row is bit for bit Model::evaluate's.
//
// Sizing (options.sizing): the first time the evaluator falls behind, and if a full evaluation
// of a snapshot costs more than half the catch-up thread's share of one eval_every
// (options.share cores, at options.sample_cost_s a sample, measured before the run), the
// intermediate snapshots from then on (those waiting included) are scored on the first N test
// and first M train samples, a multiple of eval_batch each (size_evaluation): every row says
// how many. The final snapshot is always scored on the full samples. Sized, the backlog holds
// kSizedPending snapshots: where even the smallest evaluation costs more than the share,
// snapshots are skipped (and counted) rather than scored ever later.
//
// What is left when training stops is scored afterwards on all cores, and the threads' blocks
// in flight are dropped. The backlog is bounded (kMaxPending snapshots, and their memory): a
// snapshot due while it is full is skipped and counted. In inline mode (the virtual clock,
// where evaluation costs no virtual time) submit() evaluates at once on the full samples, so
// target-error stops are deterministic.
//
// Parallel evaluation (options.parallel, the default): where no training competes for the cores
// (inline, and the snapshots left when training stops) one snapshot's test and train samples
// are split into blocks of eval_batch samples, evaluated as oneTBB tasks, and their sums added
// in block order: the same additions in the same order as one thread's evaluation, so every
// row is bit for bit what the serial evaluation gives, whatever the thread count. The snapshots
// left at the end are tasks too (in blocks while there are fewer than threads, and the final
// one always), so a long backlog and the final snapshot (which the background threads leave to
// finish()) both use every core. The background threads stay serial: TBB's threads run at
// normal priority and would take the cores from the workers. Without options.parallel each
// snapshot is evaluated on one thread (inline: the caller; at the end: one plain thread per
// core, a snapshot each), the baseline of benchmarks/tbb_bench.cpp.
//
// An exception while evaluating (in background, inline or at the end) is kept, not thrown:
// failed() turns true and failure() has its message; the snapshots it left unevaluated have no
// row. A ModelError (the user's module failing in eval mode) is the model's failure, not a bug:
// model_failed() says so, and its detail (a TorchScript traceback) is kept for run.log.
//
// Thread safety: submit() and start_clock() from one thread (the server's or the supervisor's);
// target_reached(), failed() and the other const members from any thread; finish() once, from
// the thread that owns the Evaluator. Evaluations run on the background threads, on the caller
// of submit() (inline) or finish(), and on TBB's threads; each uses a workspace of its own
// (a thread's own, or spare_ws_ under ws_mu_); a snapshot's progress and its row are recorded
// under mu_.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "engine/caught_failure.hpp"
#include "stalesgd/data/dataset.hpp"
#include "stalesgd/metrics/records.hpp"
#include "stalesgd/model/model.hpp"

namespace stalesgd {

// The test and train samples one evaluation scores (the first ones of each split); the
// held-out split is always scored whole.
struct EvalPlan {
  std::size_t test = 0;
  std::size_t train = 0;
  bool operator==(const EvalPlan&) const = default;
};

// The samples of an intermediate evaluation that fits `budget_s` seconds of one core at
// `sample_cost_s` seconds a sample: `full` when all of it (and the `val` held-out samples)
// fits; otherwise test and train cut by one fraction, so that they and `val` fit, each rounded
// down to a multiple of `batch` but at least one batch (or all of a smaller split).
EvalPlan size_evaluation(EvalPlan full, std::size_t val, std::size_t batch, double sample_cost_s,
                         double budget_s);

struct EvaluatorOptions {
  bool background = true;
  std::size_t test_samples = 0;  // 0 = whole test split
  std::size_t train_samples = 10000;
  double target_error = 0.0;  // 0 = none
  int eval_batch = 500;
  // Evaluate one snapshot in parallel blocks (oneTBB) inline and after the run (see above).
  bool parallel = true;

  // --- Background mode only.
  // --eval-every: a snapshot that waited longer than this, or two waiting, is "behind".
  double eval_every_s = 0.5;
  // Whether the catch-up thread exists (tests turn it off to leave the backlog to finish()).
  bool catch_up = true;
  // --eval-sizing auto: intermediate snapshots sized to the catch-up thread's share once behind.
  bool sizing = false;
  // Cores the catch-up thread gets beside the run's busy threads: cores / (busy + 1), at most 1.
  double share = 1.0;
  // Seconds of one core to score one sample; 0: measured in the constructor (a block of
  // eval_batch test samples after a warm-up block, on this thread's CPU clock). For sizing.
  double sample_cost_s = 0.0;
};

// What the background threads did (for tests and run.log).
struct EvaluatorStats {
  std::size_t behind = 0;      // times the catch-up thread took over
  std::size_t caught_up = 0;   // rows the catch-up thread finished
  bool sized = false;          // intermediate snapshots on sized_plan() from some point
  EvalPlan full, sized_plan;   // the full samples, and those of a sized snapshot
  double sample_cost_s = 0.0;  // the cost sizing used (0 without sizing)
};

class Evaluator {
 public:
  using Clock = std::chrono::steady_clock;

  Evaluator(const Model& model, const Dataset& data, EvaluatorOptions options);
  ~Evaluator();
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  // Snapshots waiting in the background at most (fewer for a model above 2M parameters: at
  // most 256 MiB of copies).
  static constexpr std::size_t kMaxPending = 32;
  static constexpr std::size_t kMaxPendingBytes = std::size_t{256} << 20;
  // Once intermediate snapshots are sized: one being scored and one waiting, at most.
  static constexpr std::size_t kSizedPending = 2;

  // The run clock's origin: a row's scored_s is seconds since `start` (background mode; before
  // this call, since the Evaluator was made). Inline, scored_s is the snapshot's wall_s.
  void start_clock(Clock::time_point start);
  // `final`: the run's last snapshot, never skipped, always on the full samples.
  void submit(double wall_s, std::uint64_t iteration, std::span<const float> params,
              bool final = false);
  // True once some evaluated snapshot had test error <= target.
  bool target_reached() const { return target_reached_.load(std::memory_order_acquire); }
  // The evaluations done since row `from`, in submission order, up to the first not done yet
  // (for the journal).
  std::vector<EvalRecord> ready(std::size_t from) const;
  // Snapshots skipped because the backlog was full.
  std::size_t skipped() const;
  EvaluatorStats stats() const;
  // A resumed run: the evaluations (and skips) of the run before its checkpoint, as if done
  // here. Call before the first submit().
  void restore(const std::vector<EvalRecord>& rows, std::size_t skipped);
  // True once an evaluation threw; failure() is then its one line.
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  std::string failure() const;
  // With failed(): whether the model itself failed (a ModelError), what failed, and its detail.
  bool model_failed() const;
  FailureCause failure_cause() const;
  std::string failure_detail() const;
  // Every evaluation, in submission order; evaluates what is still pending. Once `interrupt`
  // is set (before or during the call) only the final snapshot is still evaluated: the others
  // left are dropped, so a Ctrl-C ends a long backlog at once.
  std::vector<EvalRecord> finish(const std::atomic<bool>* interrupt = nullptr);
  // The latest evaluated row, if any (for progress lines).
  std::optional<EvalRecord> latest() const;

 private:
  enum class Owner { kNone, kIdle, kCatchUp };
  struct Block {
    const Split* split;
    std::size_t first;
    std::size_t count;
    int part;  // 0 test, 1 train, 2 held-out
  };
  struct Job {
    double wall_s;
    std::uint64_t iteration;
    std::vector<float> params;
    std::size_t index;  // position in results_
    bool final;
    // The final snapshot with options.parallel: the background threads leave it to finish(),
    // which is called right after it and evaluates it on every core.
    bool for_finish;
    Clock::time_point submitted;
    EvalPlan plan;                // GUARDED_BY(mu_)
    Owner owner = Owner::kNone;   // GUARDED_BY(mu_): the thread scoring it
    std::uint64_t epoch = 0;      // GUARDED_BY(mu_): raised when plan changes
    std::size_t blocks_done = 0;  // GUARDED_BY(mu_): its first blocks, summed in sums
    EvalSums sums[3];             // GUARDED_BY(mu_): test, train, held-out
  };
  using JobPtr = std::shared_ptr<Job>;  // shared: a thread's block in flight outlives finish()

  std::vector<Block> blocks(const EvalPlan& plan) const;
  EvalRecord row_of(const Job& job, const EvalPlan& plan, const EvalSums (&sums)[3]) const;
  EvalRecord evaluate(const Job& job, Workspace& ws) const;
  // As evaluate(), in blocks of eval_batch samples run as TBB tasks; the same row bit for bit.
  EvalRecord evaluate_blocks(const Job& job);
  // A workspace for one evaluation at a time: a spare one, else a new one.
  std::unique_ptr<Workspace> take_workspace();
  void give_back(std::unique_ptr<Workspace> ws);
  // The snapshots left at the end, without options.parallel: one plain thread per core.
  void drain_on_threads(std::vector<JobPtr>& rest, const std::atomic<bool>* interrupt);
  void store(std::size_t index, EvalRecord row);
  void store_locked(std::size_t index, EvalRecord row);  // REQUIRES(mu_)
  double since_clock_locked() const;                     // REQUIRES(mu_)
  double measure_sample_cost() const;
  // The background threads' loop: the next block of the job `role` should score, then its sums.
  void run_background(Owner role);
  JobPtr next_job_locked(Owner role, Clock::time_point now);  // REQUIRES(mu_)
  bool behind_locked(Clock::time_point now) const;            // REQUIRES(mu_)
  std::optional<Clock::time_point> behind_at_locked() const;  // REQUIRES(mu_)
  void stop_threads();
  // In a catch block: keeps the first exception's failure (a ModelError is the model's, met
  // "evaluating a snapshot"; anything else the evaluator's) and sets failed_.
  void fail_current();

  const Model& model_;
  const Dataset& data_;
  EvaluatorOptions options_;
  EvalPlan full_;   // the requested samples: every inline row and the final one
  EvalPlan sized_;  // an intermediate snapshot's once sizing is on (== full_ if it fits)
  double sample_cost_s_ = 0.0;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<JobPtr> queue_;           // GUARDED_BY(mu_): submitted, not yet scored, oldest first
  std::vector<EvalRecord> results_;    // GUARDED_BY(mu_)
  std::vector<bool> done_;             // GUARDED_BY(mu_)
  std::optional<std::size_t> latest_;  // GUARDED_BY(mu_)
  bool stopping_ = false;              // GUARDED_BY(mu_)
  bool catching_up_ = false;           // GUARDED_BY(mu_): the catch-up thread is at work
  bool sized_on_ = false;              // GUARDED_BY(mu_): intermediate snapshots on sized_
  std::size_t behind_ = 0;             // GUARDED_BY(mu_)
  std::size_t caught_up_ = 0;          // GUARDED_BY(mu_)
  Clock::time_point clock_start_;      // GUARDED_BY(mu_)
  // Set by finish() before it lifts the idle thread's priority (without the lock, which a
  // thread at SCHED_IDLE may hold on a busy machine): take no further block.
  std::atomic<bool> finishing_{false};
  std::size_t skipped_ = 0;  // GUARDED_BY(mu_)
  std::size_t max_pending_;
  // Release/acquire: a reader that sees true also sees the row that set it (written before,
  // under mu_); the flag itself is polled lock-free by the server loop.
  std::atomic<bool> target_reached_{false};
  CaughtFailure failure_;  // GUARDED_BY(mu_): the first evaluation's exception
  // Release/acquire, as target_reached_: a reader that sees true also sees failure_ (written
  // before, under mu_). stop_due polls it lock-free.
  std::atomic<bool> failed_{false};
  std::unique_ptr<Workspace> inline_ws_;
  std::mutex ws_mu_;  // a leaf: held only to move a workspace in or out of spare_ws_
  std::vector<std::unique_ptr<Workspace>> spare_ws_;  // GUARDED_BY(ws_mu_)
  std::thread idle_thread_, catch_up_thread_;
};

}  // namespace stalesgd
