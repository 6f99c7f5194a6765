// Evaluator::finish: the snapshots left when training stops, on every core (evaluator.hpp).
#include "engine/evaluator.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <thread>

#include <tbb/task_arena.h>

#include "util/parallel.hpp"

namespace stalesgd {

std::vector<EvalRecord> Evaluator::finish(const std::atomic<bool>* interrupt) {
  std::vector<JobPtr> rest;
  const bool threads = idle_thread_.joinable();
  if (threads) {
    // No further block for the background threads from here (the snapshots are finish()'s).
    finishing_.store(true, std::memory_order_release);
    // Before the lock, which the idle thread may hold: at normal priority it lets go at once
    // (with CAP_SYS_NICE; without, the call fails and the lock waits for a free core).
    sched_param param{};
    pthread_setschedparam(idle_thread_.native_handle(), SCHED_OTHER, &param);
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      rest.assign(queue_.begin(), queue_.end());
      queue_.clear();
    }
    cv_.notify_all();
  }
  // Training is over: the remaining snapshots may use every core. The background threads' blocks
  // in flight are dropped; they are joined after, so that a block at SCHED_IDLE on a machine
  // that other processes keep busy cannot hold up these rows.
  if (options_.parallel) {
    const auto interrupted = [&] {
      return interrupt != nullptr && interrupt->load(std::memory_order_relaxed);
    };
    // Each snapshot a task. Fewer snapshots than threads (the final one alone, most often):
    // each in blocks, so they still fill the cores. More: a snapshot per task in one piece,
    // which measured a little faster than blocks there (docs/performance.md, "oneTBB"), but
    // the final one, on the full samples and so often the largest, in blocks (nested tasks
    // that the threads done with the others take).
    const bool few =
        rest.size() < static_cast<std::size_t>(tbb::this_task_arena::max_concurrency());
    parallel_for_index(rest.size(), [&](std::size_t i) {
      const bool in_blocks = few || rest[i]->final;
      if (failed()) return;  // a failure ends the evaluations (serially: the failing drain's)
      if (i + 1 < rest.size() && interrupted()) return;  // only the final snapshot is left
      try {
        if (in_blocks) {
          store(rest[i]->index, evaluate_blocks(*rest[i]));
        } else {
          auto ws = take_workspace();
          store(rest[i]->index, evaluate(*rest[i], *ws));
          give_back(std::move(ws));
        }
      } catch (...) {
        fail_current();
      }
    });
  } else {
    drain_on_threads(rest, interrupt);
  }
  if (threads) stop_threads();
  std::lock_guard lock(mu_);
  // Rows not evaluated (skipped after a signal, or a failed evaluation) have none.
  std::vector<EvalRecord> rows;
  for (std::size_t i = 0; i < results_.size(); ++i) {
    if (done_[i]) rows.push_back(results_[i]);
  }
  return rows;
}

void Evaluator::drain_on_threads(std::vector<JobPtr>& rest, const std::atomic<bool>* interrupt) {
  const auto interrupted = [&] {
    return interrupt != nullptr && interrupt->load(std::memory_order_relaxed);
  };
  std::atomic<std::size_t> next{0};  // relaxed: only hands out indices; join() publishes results
  auto drain = [&] {
    try {
      auto ws = model_.make_workspace(options_.eval_batch);
      for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < rest.size();) {
        if (i + 1 < rest.size() && interrupted()) continue;  // only the final snapshot is left
        store(rest[i]->index, evaluate(*rest[i], *ws));
      }
    } catch (...) {
      fail_current();
    }
  };
  const std::size_t helpers =
      std::min<std::size_t>(rest.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < helpers; ++t) pool.emplace_back(drain);
  drain();
  for (auto& t : pool) t.join();
}

}  // namespace stalesgd
