// HogwildEngine: the --server hogwild engine (Hogwild!, Recht et al. 2011; async only): its
// class, shared by hogwild_engine.cpp (workers, updates, the run) and hogwild_failures.cpp
// (failed workers). docs/architecture.md, "Server placement".
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>
#include "engine/caught_failure.hpp"
#include "engine/run_context.hpp"
#include "engine/run_supervisor.hpp"
#include "output/checkpoint.hpp"
#include "stalesgd/data/sampler.hpp"
#include "stalesgd/straggler/profile.hpp"
#include "stalesgd/util/seed.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {

// A relaxed float load or store must be a plain move, on the vector's own floats.
static_assert(std::atomic_ref<float>::is_always_lock_free);
static_assert(std::atomic_ref<float>::required_alignment == alignof(float));

// HogwildEngine: P workers and the supervisor's view of them. Thread safety and memory model:
// params_ is read and written by every thread at once with no lock, always through
// std::atomic_ref<float>, memory_order_relaxed, plain loads and stores (never fetch_add). That
// makes the concurrent access well-defined C++ (no data race, so no undefined behaviour) and
// keeps ThreadSanitizer meaningful (it reports only real races elsewhere), and on x86 each is a
// plain move. The price is Hogwild!'s premise: a reader may see a mix of versions, and two
// workers' load + store of one element may lose an update. The model reads with plain loads, so
// a worker computes on its own copy, its w_tau (one pass over n floats per minibatch, small
// next to a gradient). version_ counts updates claimed: it labels reads and publishes nothing.
// A stop gate (Worker::applying against stopping_) claims no update once the run stops and
// applies every claim below the budget: updates.csv numbers 1..N with no gaps. Each worker
// keeps its own records under its own (uncontended) mutex; the supervisor's thread collects
// them and passes on the rows numbered without a gap so far (journal and checkpoints; docs/
// reliability.md). Failed workers (--fail;
// docs/rules.md, "Failed workers"): a crashed worker records its crash and ends its thread; a
// hung one blocks until the stop and the supervisor's watch() finds it by --worker-timeout;
// when no worker is left the run stops (kWorkersFailed).
class HogwildEngine final : public SupervisedEngine {
 public:
  using Seconds = std::chrono::duration<double>;

  explicit HogwildEngine(RunContext& ctx)
      : ctx_(ctx),
        o_(ctx.options),
        lr_rule_(ctx.run.learning_rate()),
        params_(ctx.initial),
        scratch_(params_.size()),
        live_(ctx.options.workers),
        hang_found_s_(static_cast<std::size_t>(ctx.options.workers), -1.0) {}

  Result<RunRecord> run();

  StopReason wait_until(Clock::time_point deadline) override {
    std::unique_lock lock(stop_mu_);
    stop_cv_.wait_until(lock, deadline, [&] { return reason_ != StopReason::kNone; });
    return reason_;
  }

  // An inconsistent snapshot, like every Hogwild! read: elements may come from different
  // versions; the version (updates claimed, read first, capped at the budget) only labels it.
  void inspect(const Look& look) override {
    std::uint64_t v = version_.load(std::memory_order_relaxed);
    if (o_.iterations > 0) v = std::min(v, o_.iterations);
    for (std::size_t i = 0; i < scratch_.size(); ++i) scratch_[i] = load(i);
    collect();
    look(v, scratch_, &merged_);
  }

  // A checkpoint: the parameters as a Hogwild! read sees them, the updates numbered without a
  // gap so far (a resumed run numbers on from there; updates claimed above them and not yet
  // recorded are part of the read, not of the records), every worker's counts.
  void save(StateWriter& out, const Look& look) override {
    inspect(look);
    out.tag("hogwild");
    out.u64(merged_.updates.size());
    out.values(scratch_);
    // The rows above the gap are not in the checkpoint's records: their workers' counts leave
    // them out too, so that the counts and the records agree (their updates are in the read).
    std::vector<std::uint64_t> above(workers_.size(), 0);
    for (const auto& [iteration, rows] : waiting_)
      ++above[static_cast<std::size_t>(rows.second.worker)];
    for (const auto& w : workers_) {
      std::lock_guard lock(w->mu);
      const WorkerRecord& s = w->stats;
      // Rows recorded since inspect() collected (this worker pushed meanwhile) are left out
      // the same way: counted under the lock they were recorded under.
      const std::uint64_t cut =
          above[static_cast<std::size_t>(s.worker)] + w->updates.size() - w->taken;
      for (std::uint64_t v : {s.started, s.computed, s.pushed - cut, s.applied - cut}) out.u64(v);
      out.f64(s.busy_s);
      out.f64(s.idle_s);
      out.boolean(s.failed);
      out.f64(s.failed_at_s);
      out.str(s.failure);
    }
  }

  StopReason stop(StopReason reason) override {
    const StopReason holds = request_stop(reason);
    // Waits out the updates already past the gate (microseconds): none is recorded after this.
    for (const auto& w : workers_) {
      while (w->applying.load(std::memory_order_seq_cst)) std::this_thread::yield();
    }
    return holds;
  }

  void watch(Clock::time_point now) override;
  std::string stuck() override;

  double mean_staleness() override {
    std::uint64_t sum = 0, n = 0;
    for (const auto& w : workers_) {
      sum += w->staleness_sum.load(std::memory_order_relaxed);
      n += w->applied.load(std::memory_order_relaxed);
    }
    return n == 0 ? 0.0 : static_cast<double>(sum) / static_cast<double>(n);
  }

 private:
  // alignas(64): each worker writes its atomics on every update; no false sharing.
  struct alignas(64) Worker {
    Worker(RunContext& ctx, int w, std::uint64_t seed)
        : copy(ctx.initial.size()),
          grad(ctx.initial.size()),
          ws(ctx.model->make_workspace(ctx.options.batch)),
          sampler(ctx.sampler(w, derive_seed(seed, SeedStream::kSampler, w))),
          delays(ctx.run.delays(), w, seed) {
      stats.worker = w;
    }
    // Set from the worker's stop check to the end of its update. seq_cst, as stopping_: a
    // Dekker handshake, so either the worker sees the stop or stop() sees it and waits.
    std::atomic<bool> applying{false};
    // For the progress line only (relaxed: approximate figures, nothing published by them).
    std::atomic<std::uint64_t> applied{0};
    std::atomic<std::uint64_t> staleness_sum{0};
    // When its minibatch in flight ends (steady-clock nanoseconds), kNoDue once it crashed or
    // stopped: the supervisor's watch() finds a hung worker by it. Relaxed: a time stamp for a
    // timeout of seconds, publishing no data.
    std::atomic<std::int64_t> due_ns{kNoDue};
    // Owned by the worker thread.
    std::vector<float> copy;  // w_tau: this worker's read of params_
    std::vector<float> grad;
    std::unique_ptr<Workspace> ws;
    MinibatchSampler sampler;
    DelaySampler delays;
    // Written by the worker, read by the supervisor's thread (collect, save), each under mu.
    std::mutex mu;
    WorkerRecord stats;                     // GUARDED_BY(mu)
    std::vector<UpdateRecord> updates;      // GUARDED_BY(mu)
    std::vector<GradientRecord> gradients;  // GUARDED_BY(mu)
    std::size_t taken = 0;                  // supervisor's thread only: rows already collected
  };

  // Supervisor's thread: moves the rows the workers recorded since the last call into
  // merged_, as far as they are numbered without a gap (a lower-numbered update may still be
  // in flight on another worker).
  void collect() {
    for (const auto& w : workers_) {
      std::lock_guard lock(w->mu);
      for (std::size_t i = w->taken; i < w->updates.size(); ++i) {
        waiting_.emplace(w->updates[i].iteration, std::pair(w->updates[i], w->gradients[i]));
      }
      w->taken = w->updates.size();
    }
    for (auto it = waiting_.begin();
         it != waiting_.end() && it->first == merged_.updates.size() + 1; it = waiting_.erase(it)) {
      merged_.updates.push_back(it->second.first);
      merged_.gradients.push_back(it->second.second);
    }
  }
  // --resume: restores what save() wrote; returns the run's clock at the checkpoint.
  Result<double> resume(RunSupervisor& supervisor, const std::string& payload);

  float load(std::size_t i) {
    return std::atomic_ref<float>(params_[i]).load(std::memory_order_relaxed);
  }
  double since_start(Clock::time_point t) const { return Seconds(t - start_).count(); }

  void worker_main(Worker& me);
  void worker_loop(Worker& me);
  // Worker `me` fails as --fail says: a crash records itself and returns; a hang blocks until
  // the stop.
  void fail_worker(Worker& me, FailureKind how);
  // One worker fewer (crashed, or found hung); the last one stops the run.
  void lose_worker() {
    if (live_.fetch_sub(1, std::memory_order_relaxed) == 1) {
      request_stop(StopReason::kWorkersFailed);
    }
  }
  static std::int64_t ns(Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  }
  static constexpr std::int64_t kNoDue = std::numeric_limits<std::int64_t>::max();
  // Delivers one gradient (`duration_s`: its minibatch's start to now, for gradients.csv):
  // false when the worker must exit (the run stops, the budget is spent).
  bool push(Worker& me, std::uint64_t computed_on, float loss, double duration_s);
  // Sleeps until `until`; false when the run stops first.
  bool sleep_until(Clock::time_point until) {
    if (Clock::now() >= until) return !stopping_.load(std::memory_order_relaxed);
    return wait_until(until) == StopReason::kNone;
  }
  // Sets the stop reason unless one holds (the first wins), keeps the first worker exception's
  // message, wakes every sleeper; returns the reason that holds. Workers call it: it skips the
  // gate.
  StopReason request_stop(StopReason reason, std::string divergence = {}, std::string failure = {},
                          FailureCause cause = FailureCause::kBug) {
    std::unique_lock lock(stop_mu_);
    if (!failure.empty() && thread_failure_.empty()) {
      thread_failure_ = std::move(failure);
      failure_cause_ = cause;
    }
    if (reason_ == StopReason::kNone) {
      reason_ = reason;
      divergence_ = std::move(divergence);
      stopping_.store(true, std::memory_order_seq_cst);
    }
    const StopReason holds = reason_;
    lock.unlock();
    stop_cv_.notify_all();
    return holds;
  }

  RunContext& ctx_;
  const TrainerOptions& o_;
  const LearningRate& lr_rule_;  // immutable: rate() is safe from any thread
  std::vector<float> params_;    // the shared w: only through atomic_ref while workers run
  std::vector<float> scratch_;   // the supervisor's snapshot buffer
  std::vector<std::unique_ptr<Worker>> workers_;
  // Updates claimed. fetch_add hands out distinct numbers 0, 1, 2, ... whatever the order
  // (every RMW reads the latest value), and a worker's load before its own fetch_add never
  // reads a later value (coherence), so staleness j - computed_on >= 0. Relaxed is enough:
  // the counter publishes no data (each element of params_ is its own atomic).
  std::atomic<std::uint64_t> version_{0};
  // The stop flag, polled by workers and the model between layers. seq_cst: the other half
  // of the gate's handshake; written only under stop_mu_, so cv waiters cannot miss it.
  std::atomic<bool> stopping_{false};
  Clock::time_point start_;         // written before the workers start
  Clock::time_point resumed_from_;  // likewise: when this process began (start_ unless resumed)
  // Workers neither crashed nor found hung. Relaxed: fetch_sub's RMWs are one order, so exactly
  // one caller takes the last worker; nothing is published through it.
  std::atomic<int> live_;
  std::vector<double> hang_found_s_;  // the supervisor's thread alone: when watch() found each
                                      // worker hung (-1: not), read by run() after supervise

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;        // wakes sleepers and the supervisor on a stop
  StopReason reason_ = StopReason::kNone;  // GUARDED_BY(stop_mu_)
  std::string divergence_;                 // GUARDED_BY(stop_mu_)
  // GUARDED_BY(stop_mu_): the first worker exception, as the stop message. It ends the run as
  // kFailed whatever stopped it first: a bug is never passed off as a result.
  std::string thread_failure_;
  FailureCause failure_cause_ = FailureCause::kBug;  // GUARDED_BY(stop_mu_): thread_failure_'s

  // The supervisor's thread only: the rows numbered 1..N without a gap, and those above.
  RunRecord merged_;
  std::map<std::uint64_t, std::pair<UpdateRecord, GradientRecord>> waiting_;
  std::vector<WorkerRecord> restored_stats_;  // --resume: each worker's counts so far
  std::uint64_t stream_seed_ = 0;             // the delay and minibatch streams' seed
};

}  // namespace stalesgd
