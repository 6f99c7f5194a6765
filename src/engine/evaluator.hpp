// Evaluator: evaluates parameter snapshots taken during training (test loss and error, train
// loss on a subset, loss and error on the held-out split when there is one) without stealing time
// from the run it measures. In background mode a thread at SCHED_IDLE priority evaluates snapshots
// only when a core would otherwise be idle (workers sleeping out their delays); whatever is left
// when training stops is evaluated afterwards on all cores. The backlog is bounded (kMaxPending
// snapshots, and their memory): a snapshot due while it is full is skipped and counted, so an
// --eval-every far shorter than an evaluation cannot hold up the end of a run without limit. In
// inline mode (the virtual clock, where evaluation costs no virtual time) submit() evaluates at
// once, so target-error stops are deterministic.
//
// Parallel evaluation (options.parallel, the default): where no training competes for the cores
// (inline, and the snapshots left when training stops) one snapshot's test and train samples
// are split into blocks of eval_batch samples, evaluated as oneTBB tasks, and their sums added
// in block order: the same additions in the same order as one thread's evaluation, so every
// row is bit for bit what the serial evaluation gives, whatever the thread count. The snapshots
// left at the end are tasks too (in blocks while there are fewer than threads), so a long
// backlog and the final snapshot (which the background thread leaves to finish()) both use
// every core. The background thread stays
// serial at SCHED_IDLE: TBB's threads run at normal priority and would take the cores from the
// workers. Without options.parallel each snapshot is evaluated on one thread (inline: the
// caller; at the end: one plain thread per core, a snapshot each), the baseline of
// benchmarks/tbb_bench.cpp.
//
// An exception while evaluating (in background or at the end) is kept, not thrown: failed()
// turns true and failure() has its message; the snapshots it left unevaluated have no row.
//
// Thread safety: submit() from one thread (the server); target_reached() and failed() from any
// thread; finish() once, from the thread that owns the Evaluator. Evaluations run on the
// background thread, on the caller of submit() (inline) or finish(), and on TBB's threads; each
// uses a workspace of its own (spare_ws_, under ws_mu_) and records its row under mu_.
#pragma once

#include <atomic>
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

#include "stalesgd/data/dataset.hpp"
#include "stalesgd/metrics/records.hpp"
#include "stalesgd/model/model.hpp"

namespace stalesgd {

struct EvaluatorOptions {
  bool background = true;
  std::size_t test_samples = 0;  // 0 = whole test split
  std::size_t train_samples = 10000;
  double target_error = 0.0;  // 0 = none
  int eval_batch = 500;
  // Evaluate one snapshot in parallel blocks (oneTBB) inline and after the run (see above).
  bool parallel = true;
};

class Evaluator {
 public:
  Evaluator(const Model& model, const Dataset& data, EvaluatorOptions options);
  ~Evaluator();
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  // Snapshots waiting in the background at most (fewer for a model above 2M parameters: at
  // most 256 MiB of copies).
  static constexpr std::size_t kMaxPending = 32;
  static constexpr std::size_t kMaxPendingBytes = std::size_t{256} << 20;

  // `final`: the run's last snapshot, never skipped.
  void submit(double wall_s, std::uint64_t iteration, std::span<const float> params,
              bool final = false);
  // True once some evaluated snapshot had test error <= target.
  bool target_reached() const { return target_reached_.load(std::memory_order_acquire); }
  // The evaluations done since row `from`, in submission order, up to the first not done yet
  // (for the journal).
  std::vector<EvalRecord> ready(std::size_t from) const;
  // Snapshots skipped because the backlog was full.
  std::size_t skipped() const;
  // A resumed run: the evaluations (and skips) of the run before its checkpoint, as if done
  // here. Call before the first submit().
  void restore(const std::vector<EvalRecord>& rows, std::size_t skipped);
  // True once an evaluation threw; failure() is then its one line.
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  std::string failure() const;
  // Every evaluation, in submission order; evaluates what is still pending. Once `interrupt`
  // is set (before or during the call) only the final snapshot is still evaluated: the others
  // left are dropped, so a Ctrl-C ends a long backlog at once.
  std::vector<EvalRecord> finish(const std::atomic<bool>* interrupt = nullptr);
  // The latest evaluated row, if any (for progress lines).
  std::optional<EvalRecord> latest() const;

 private:
  struct Pending {
    double wall_s;
    std::uint64_t iteration;
    std::vector<float> params;
    std::size_t index;  // position in results_
    // The final snapshot with options.parallel: the background thread leaves it to finish(),
    // which is called right after it and evaluates it on every core.
    bool for_finish = false;
  };
  EvalRecord evaluate(const Pending& p, Workspace& ws) const;
  // As evaluate(), in blocks of eval_batch samples run as TBB tasks; the same row bit for bit.
  EvalRecord evaluate_blocks(const Pending& p);
  // A workspace for one evaluation at a time: a spare one, else a new one.
  std::unique_ptr<Workspace> take_workspace();
  void give_back(std::unique_ptr<Workspace> ws);
  // The snapshots left at the end, without options.parallel: one plain thread per core.
  void drain_on_threads(std::vector<Pending>& rest, const std::atomic<bool>* interrupt);
  void store(std::size_t index, const EvalRecord& row);
  void run_background();
  // Keeps the first exception's message and sets failed_.
  void fail(const char* what);

  const Model& model_;
  const Dataset& data_;
  EvaluatorOptions options_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;          // GUARDED_BY(mu_)
  std::vector<EvalRecord> results_;    // GUARDED_BY(mu_)
  std::vector<bool> done_;             // GUARDED_BY(mu_)
  std::optional<std::size_t> latest_;  // GUARDED_BY(mu_)
  bool stopping_ = false;              // GUARDED_BY(mu_)
  // Set by finish() before it lifts the background thread's priority (without the lock, which
  // a thread at SCHED_IDLE may hold on a busy machine): take no further snapshot.
  std::atomic<bool> finishing_{false};
  std::size_t skipped_ = 0;  // GUARDED_BY(mu_)
  std::size_t max_pending_;
  // Release/acquire: a reader that sees true also sees the row that set it (written before,
  // under mu_); the flag itself is polled lock-free by the server loop.
  std::atomic<bool> target_reached_{false};
  std::string failure_;  // GUARDED_BY(mu_): the first evaluation's exception
  // Release/acquire, as target_reached_: a reader that sees true also sees failure_ (written
  // before, under mu_). stop_due polls it lock-free.
  std::atomic<bool> failed_{false};
  std::unique_ptr<Workspace> inline_ws_;
  std::mutex ws_mu_;  // a leaf: held only to move a workspace in or out of spare_ws_
  std::vector<std::unique_ptr<Workspace>> spare_ws_;  // GUARDED_BY(ws_mu_)
  std::thread thread_;
};

}  // namespace stalesgd
