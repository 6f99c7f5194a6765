// parallel_for_index: fn(0), ..., fn(n - 1) as oneTBB tasks, in any order and on any of TBB's
// threads, returning when all are done (an exception in one is rethrown here). Callers that
// need a result independent of the thread count give each index its own output slot and
// combine the slots in index order afterwards.
//
// ThreadSanitizer: Debian's libtbb is not instrumented, so TSan cannot see the synchronisation
// inside TBB's scheduler and would report TBB's own task objects, and every hand-off to and from
// a task, as races. Under TSan this wrapper therefore (1) hides the accesses TBB's code makes
// (on its worker threads, and on the calling thread while it is inside the parallel call) and
// (2) states the two orderings TBB guarantees as happens-before edges: everything before the
// call happens before each fn(i), and each fn(i) happens before the return. fn's own accesses
// stay visible, so a race between two fn(i) (or with another thread) is still reported. The
// workers are hidden by an observer of one arena that every call runs in (one slot per core;
// tbb::global_control still caps its threads). Plain builds compile to a bare
// tbb::parallel_for in the caller's arena. See docs/performance.md, "oneTBB".
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>

#include <tbb/parallel_for.h>

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#include <tbb/info.h>
#include <tbb/task_arena.h>
#include <tbb/task_scheduler_observer.h>

#include "util/tsan_hide.hpp"
#endif

namespace stalesgd {

#if defined(__SANITIZE_THREAD__)
namespace tsan_tbb {

using tsan::hide;
using tsan::show;

// Whether this TBB worker is hidden. A worker can end while still in the arena (TBB ends its
// workers when the arena or the last global_control goes, without on_scheduler_exit); TSan
// reports a thread that ends with its accesses still ignored, so the thread_local's destructor,
// which glibc runs before TSan's own end-of-thread handling, shows it again.
struct WorkerHidden {
  bool on = false;
  ~WorkerHidden() {
    if (on) show();
  }
};
inline thread_local WorkerHidden worker_hidden;

// Hides the arena's worker threads for as long as they are in it: outside our fn(i) they run
// only TBB's code.
class HideWorkers final : public tbb::task_scheduler_observer {
 public:
  explicit HideWorkers(tbb::task_arena& arena) : tbb::task_scheduler_observer(arena) {
    arena.initialize();
    observe(true);
  }
  ~HideWorkers() override { observe(false); }
  void on_scheduler_entry(bool worker) override {
    if (!worker || worker_hidden.on) return;
    hide();
    worker_hidden.on = true;
  }
  void on_scheduler_exit(bool worker) override {
    if (!worker || !worker_hidden.on) return;
    show();
    worker_hidden.on = false;
  }
};

// Shows fn(i)'s accesses: acquires what the caller released before the call; on the way out
// (also by an exception) releases fn's work to the caller and hides TBB's code again.
class ShowTask {
 public:
  ShowTask(void* before, void* after) : after_(after) {
    show();
    __tsan_acquire(before);
  }
  ~ShowTask() {
    __tsan_release(after_);
    hide();
  }
  ShowTask(const ShowTask&) = delete;
  ShowTask& operator=(const ShowTask&) = delete;

 private:
  void* after_;
};

// The calling thread's side: releases its earlier work to the tasks, hides TBB's code during
// the call, and afterwards acquires the tasks' work.
class HideCall {
 public:
  HideCall(void* before, void* after) : after_(after) {
    __tsan_release(before);
    hide();
  }
  ~HideCall() {
    show();
    __tsan_acquire(after_);
  }
  HideCall(const HideCall&) = delete;
  HideCall& operator=(const HideCall&) = delete;

 private:
  void* after_;
};

// The arena every parallel_for_index runs in under TSan, its observer in place before the first
// task.
inline tbb::task_arena& arena() {
  // As many slots as TBB has threads: asking for more prints a "TBB Warning" on stderr.
  static tbb::task_arena arena(tbb::info::default_concurrency());
  static HideWorkers workers(arena);
  return arena;
}

}  // namespace tsan_tbb
#endif

template <class Fn>
void parallel_for_index(std::size_t n, Fn&& fn) {
#if defined(__SANITIZE_THREAD__)
  // Two addresses on this stack frame name the two happens-before edges of this call.
  char before = 0;
  char after = 0;
  tbb::task_arena& arena = tsan_tbb::arena();
  tsan_tbb::HideCall call(&before, &after);
  arena.execute([&] {
    tbb::parallel_for(std::size_t{0}, n, [&fn, b = &before, a = &after](std::size_t i) {
      tsan_tbb::ShowTask task(b, a);
      fn(i);
    });
  });
#else
  tbb::parallel_for(std::size_t{0}, n, [&fn](std::size_t i) { fn(i); });
#endif
}

}  // namespace stalesgd
