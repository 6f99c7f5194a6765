// WakeTimer: one thread that releases sleeping workers at their wake-up times, so that the
// server can move a sleeping worker's wake-up without waking it.
//
// Why: in k-sync and k-batch-sync every update cancels the P - K minibatches still in flight
// and restarts them. A worker that sleeps on its own timer must be woken to re-arm it: at
// P = 256 that is ~255 wake-ups per update, far more CPU than the update itself. With the
// wake-ups held here, a cancelled sleeper's restart is one heap update under this lock; only
// the worker due next is ever woken (docs/performance.md, "Many workers").
//
// The heap is indexed by worker (one entry each, moved in place), so it never holds more than
// P entries however often the server re-arms. The timer thread sleeps until the earliest entry,
// then hands every due (worker, ticket) to the `fire` callback, outside its lock: the callback
// must ignore a ticket the server has since replaced.
//
// Thread safety: arm(), disarm() and stop() from any thread. Lock order: callers may hold their
// own locks when calling arm(); `fire` runs without this timer's lock.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "engine/caught_failure.hpp"

namespace stalesgd {

class WakeTimer {
 public:
  using Clock = std::chrono::steady_clock;
  using Fire = std::function<void(int worker, std::uint64_t ticket)>;
  // Called once, on the timer thread and without its lock, with what the exception that ended
  // the thread means (nothing fires after it).
  using Fail = std::function<void(const CaughtFailure& failure)>;

  struct Entry {
    int worker = 0;
    Clock::time_point at;
    std::uint64_t ticket = 0;
  };

  // Starts the timer thread for workers 0..workers-1.
  WakeTimer(int workers, Fire fire, Fail fail = {});
  ~WakeTimer();
  WakeTimer(const WakeTimer&) = delete;
  WakeTimer& operator=(const WakeTimer&) = delete;

  // Sets each entry's worker to fire at `at` with `ticket`, replacing its earlier wake-up.
  // Wakes the timer thread only when the earliest wake-up moves earlier than it sleeps until.
  void arm(std::span<const Entry> entries);
  void disarm(int worker);
  // Ends the thread; nothing fires after stop() returns.
  void stop();

 private:
  void run();
  void loop();
  // The indexed binary min-heap on at_. REQUIRES(mu_)
  bool earlier(int a, int b) const { return at_[ix(heap_[ix(a)])] < at_[ix(heap_[ix(b)])]; }
  void swap_nodes(int a, int b);
  void sift_up(int i);
  void sift_down(int i);
  void remove_at(int i);
  static std::size_t ix(int i) { return static_cast<std::size_t>(i); }

  Fire fire_;
  Fail fail_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int> heap_;              // GUARDED_BY(mu_): workers, earliest first
  std::vector<int> pos_;               // GUARDED_BY(mu_): worker -> index in heap_, or -1
  std::vector<Clock::time_point> at_;  // GUARDED_BY(mu_)
  std::vector<std::uint64_t> ticket_;  // GUARDED_BY(mu_)
  Clock::time_point sleeping_until_;   // GUARDED_BY(mu_): min() while not asleep
  bool stop_ = false;                  // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace stalesgd
