// WakePolicy: who wakes a real-thread worker for its next minibatch, chosen by the rule.
//
// OwnTimers (asynchronous rules): nothing is ever cut, so each worker sleeps on its own timer
// until its gradient should start (one wake-up per minibatch). The version is pinned at the
// assignment and the worker may take it at once.
//
// ServerTimers (synchronous rules): up to P - K minibatches are cut per update. Here the server
// owns the wake-ups (a WakeTimer thread releases each worker when its sleep is over), so that
// restarting a sleeping worker's minibatch is a heap update and wakes nobody: what lets k-sync
// run with hundreds of workers. The server also knows, from the delays it drew, when every
// minibatch in flight ends, and that the update comes with the round's K-th earliest end: a
// minibatch that ends later is certain to be cut, and its worker is not released at all (it
// sleeps until the cut, which is what its injected delay says it does anyway). Versions are
// pinned at the release (no update can happen between the assignment and it).
//
// Thread safety: every method but the timer's callback is called by the server role, under the
// server lock (REQUIRES(server_mu)); on_assign also with the slot's lock held. Lock order:
// server lock, then a slot's, then the WakeTimer's.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "engine/parameter_store.hpp"
#include "engine/wake_timer.hpp"
#include "engine/worker_slot.hpp"
#include "rules/round_protocol.hpp"

namespace stalesgd {

class WakePolicy {
 public:
  virtual ~WakePolicy() = default;
  // True: the worker sleeps on its own until its gradient should start. False: the server
  // released it at that time already.
  virtual bool worker_sleeps() const = 0;
  // A minibatch was just assigned to worker w; `cut_pending`: it replaced one the worker had
  // not taken yet. True when the worker may take it now (notify it). REQUIRES(server, slot.mu)
  virtual bool on_assign(int w, WorkerSlot& slot, bool cut_pending) = 0;
  // Worker w's minibatch reached the server. REQUIRES(server)
  virtual void on_delivered(int w) = 0;
  // The server step's assignments are all made: release what may run. REQUIRES(server)
  virtual void after_step() = 0;
  // Worker w failed and gets no more minibatches (docs/rules.md, "Failed workers"): forget
  // its minibatch in flight. REQUIRES(server)
  virtual void on_retired(int /*w*/) {}
  // Nothing is released after stop() returns. Call after the workers are joined.
  virtual void stop() = 0;
};

// Asynchronous rules: each worker owns its wake-up.
class OwnTimers final : public WakePolicy {
 public:
  explicit OwnTimers(ParameterStore& store) : store_(store) {}
  bool worker_sleeps() const override { return true; }
  bool on_assign(int w, WorkerSlot& slot, bool cut_pending) override;
  void on_delivered(int) override {}
  void after_step() override {}
  void stop() override {}

 private:
  ParameterStore& store_;
};

// Synchronous rules: the server's WakeTimer releases the minibatches that can make the cut.
class ServerTimers final : public WakePolicy {
 public:
  // `fail`: the timer thread's exception (WakeTimer::Fail).
  ServerTimers(std::span<WorkerSlot> slots, ParameterStore& store, const RoundProtocol& protocol,
               DelayMode mode, WakeTimer::Fail fail = {});
  bool worker_sleeps() const override { return false; }
  bool on_assign(int w, WorkerSlot& slot, bool cut_pending) override;
  void on_delivered(int w) override { track_[ix(w)].ends_at = EngineClock::time_point::max(); }
  void after_step() override;
  void on_retired(int w) override;
  void stop() override { timer_->stop(); }

 private:
  // The server's view of one worker's minibatch in flight. GUARDED_BY(server)
  struct Track {
    EngineClock::time_point ends_at = EngineClock::time_point::max();  // at + X; max(): none
    bool unreleased = false;  // waits for after_step() to release it
    bool armed = false;       // the timer may hold a wake-up for it
  };
  static std::size_t ix(int w) { return static_cast<std::size_t>(w); }
  // The WakeTimer's callback (timer thread, no server lock): lets worker w take its
  // assignment if `ticket` is still current.
  void release(int w, std::uint64_t ticket);

  std::span<WorkerSlot> slots_;
  ParameterStore& store_;
  const RoundProtocol& protocol_;  // the round: how many gradients it still needs
  DelayMode mode_;
  std::vector<Track> track_;
  std::vector<EngineClock::time_point> scratch_ends_;
  std::vector<WakeTimer::Entry> to_arm_;
  // Declared last: its thread calls release(), so it must stop before the rest goes.
  std::unique_ptr<WakeTimer> timer_;
};

}  // namespace stalesgd
