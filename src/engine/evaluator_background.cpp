// The Evaluator's two background threads (evaluator.hpp): the idle-priority one that scores
// while it keeps up, the catch-up one that scores the oldest snapshots while it is behind.
#include "engine/evaluator.hpp"

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <algorithm>

namespace stalesgd {

bool Evaluator::behind_locked(Clock::time_point now) const {
  std::size_t waiting = 0;
  std::optional<Clock::time_point> oldest;
  for (const auto& job : queue_) {
    if (job->for_finish) continue;
    if (!oldest) oldest = job->submitted;
    ++waiting;
  }
  if (waiting >= 2) return true;
  const auto every = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(options_.eval_every_s));
  return oldest && now - *oldest >= every;
}

std::optional<Evaluator::Clock::time_point> Evaluator::behind_at_locked() const {
  for (const auto& job : queue_) {
    if (job->for_finish) continue;
    return job->submitted + std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(options_.eval_every_s));
  }
  return std::nullopt;
}

Evaluator::JobPtr Evaluator::next_job_locked(Owner role, Clock::time_point now) {
  if (role == Owner::kIdle) {
    // Its own job first (it is ahead of every unowned one), else the oldest nobody scores.
    for (const auto& job : queue_) {
      if (!job->for_finish && (job->owner == Owner::kNone || job->owner == Owner::kIdle)) {
        return job;
      }
    }
    return nullptr;
  }
  if (!catching_up_ && behind_locked(now)) {
    catching_up_ = true;
    ++behind_;
    if (options_.sizing && !sized_on_ && !(sized_ == full_)) {
      // From now on every intermediate snapshot on sized_, the waiting ones too (a block in
      // flight on the old plan is dropped: its epoch is past).
      sized_on_ = true;
      for (const auto& job : queue_) {
        if (job->final || job->plan == sized_) continue;
        job->plan = sized_;
        ++job->epoch;
        job->blocks_done = 0;
        job->sums[0] = job->sums[1] = job->sums[2] = EvalSums{};
      }
    }
  }
  if (!catching_up_) return nullptr;
  // The oldest, whoever has begun it: the idle thread's blocks done so far are kept.
  for (const auto& job : queue_) {
    if (!job->for_finish) return job;
  }
  catching_up_ = false;  // none waits: back to sleep until the next one is behind
  return nullptr;
}

void Evaluator::run_background(Owner role) {
  if (role == Owner::kIdle) {
    // SCHED_IDLE: run only when no other thread wants the core, so training is not slowed.
    sched_param param{};
    pthread_setschedparam(pthread_self(), SCHED_IDLE, &param);
    pthread_setname_np(pthread_self(), "eval-idle");
  } else {
    pthread_setname_np(pthread_self(), "eval-catch-up");
  }
  // An exception ends this thread, not the process: the supervisor sees failed() and ends the
  // run with the message (docs/architecture.md, "Threads, locks and atomics").
  try {
    auto ws = model_.make_workspace(options_.eval_batch);
    for (;;) {
      JobPtr job;
      Block block{};
      std::uint64_t epoch = 0;
      {
        std::unique_lock lock(mu_);
        for (;;) {
          if (stopping_ || finishing_.load(std::memory_order_acquire)) return;
          job = next_job_locked(role, Clock::now());
          if (job) break;
          const auto due = role == Owner::kCatchUp ? behind_at_locked() : std::nullopt;
          if (due) {
            cv_.wait_until(lock, *due);
          } else {
            cv_.wait(lock);
          }
        }
        job->owner = role;
        epoch = job->epoch;
        const auto all = blocks(job->plan);
        if (all.empty()) {  // nothing to score (empty splits): a row of zeros
          queue_.erase(std::find(queue_.begin(), queue_.end(), job));
          store_locked(job->index, row_of(*job, job->plan, job->sums));
          continue;
        }
        block = all[job->blocks_done];
      }
      const EvalSums sums =
          model_.evaluate_sums(job->params, *block.split, block.first, block.count, *ws);
      {
        std::lock_guard lock(mu_);
        // Dropped when finish() has the snapshot now, the other thread took it over, or its
        // plan changed.
        if (stopping_ || job->owner != role || job->epoch != epoch) continue;
        EvalSums& to = job->sums[block.part];
        to.loss += sums.loss;
        to.errors += sums.errors;
        if (++job->blocks_done < blocks(job->plan).size()) continue;
        queue_.erase(std::find(queue_.begin(), queue_.end(), job));
        if (role == Owner::kCatchUp) ++caught_up_;
        store_locked(job->index, row_of(*job, job->plan, job->sums));
      }
      cv_.notify_all();  // a slot in the backlog, and the catch-up thread may go back to sleep
    }
  } catch (...) {
    fail_current();
  }
}

}  // namespace stalesgd
