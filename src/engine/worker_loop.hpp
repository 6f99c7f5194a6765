// WorkerLoop: one real-clock worker's life, written once for the thread engine's worker threads
// and the MPI engine's rank workers (docs/architecture.md, "The path of one gradient"): take
// the minibatch the server assigned, sleep first and compute last (pad: start the gradient
// about its own time before X; add: after X), wait out the rest of X in pad mode, deliver, and
// fail when --fail says. What carries parameters, gradients, cuts and wake-ups between the
// worker and the server is the engine's WorkerPort: a WorkerSlot in shared memory (thread
// engine), or messages to and from rank 0 (MPI engine).
//
// Thread safety: a WorkerLoop and its port belong to one worker thread; the port synchronises
// with the server its own way.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <span>

#include "engine/running_mean.hpp"
#include "engine/worker_slot.hpp"
#include "stalesgd/data/sampler.hpp"
#include "stalesgd/model/model.hpp"
#include "stalesgd/straggler/delay_mode.hpp"
#include "stalesgd/straggler/failure_plan.hpp"

namespace stalesgd {

// A worker's side of the engine's transport.
class WorkerPort {
 public:
  enum class Woken { kOnTime, kCancelled, kStopped };
  // What take() handed the worker.
  struct Taken {
    bool stopped = false;                 // the run is over: the worker ends
    bool failing = false;                 // the failure time came first; nothing was taken
    EngineClock::time_point at{};         // the assignment: X runs from here
    EngineClock::duration x{};            // the minibatch's delay X
    EngineClock::time_point busy_from{};  // busy from here, idle before
    double lead_s = -1.0;                 // pad: start the gradient this long before X
    std::span<const float> params{};      // the version to compute on, until release()
  };

  virtual ~WorkerPort() = default;
  // Blocks until the server's next assignment may be taken, the run stops, or `fail_at` passes.
  // `own_lead_s` is the worker's estimate of how long before X to start (GradientClock).
  virtual Taken take(EngineClock::time_point fail_at, double own_lead_s) = 0;
  // False when the server releases each assignment at its wake-up time already (the thread
  // engine's ServerTimers): the worker computes at once.
  virtual bool sleeps_first() const { return true; }
  // Sleeps until `until` unless the minibatch is cut or the run stops first.
  virtual Woken sleep_until(EngineClock::time_point until) = 0;
  // Where the taken minibatch's gradient goes, and the flag the server sets to cut it (the
  // model polls it between layers).
  virtual std::span<float> gradient() = 0;
  virtual const std::atomic<bool>& cancel() const = 0;
  // The minibatch is over (delivered, cut or failed): `computed` when its gradient was, after
  // `idle_s` of waiting for it and `busy_s` from busy_from.
  virtual void account(double idle_s, bool computed, double busy_s) = 0;
  // Sends gradient() with its loss to the server.
  virtual void deliver(float loss) = 0;
  // After a delivery or a cut: what take() handed over is no longer read.
  virtual void release() {}
  // The worker fails as --fail planned (a crash tells the server; a hang blocks until the run
  // stops), at `at`.
  virtual void fail(FailureKind kind, EngineClock::time_point at) = 0;
};

// A port's sleep on a slot that has `mu`, `cv`, `stop` and `cancel` (WorkerSlot,
// mpi::RemoteSlot): until `until`, unless the minibatch is cut or the run stops first.
template <class Slot>
WorkerPort::Woken sleep_on(Slot& slot, EngineClock::time_point until) {
  const auto cut = [&] { return slot.stop || slot.cancel.load(std::memory_order_relaxed); };
  std::unique_lock lock(slot.mu);
  if (EngineClock::now() < until) slot.cv.wait_until(lock, until, cut);
  if (slot.stop) return WorkerPort::Woken::kStopped;
  return slot.cancel.load(std::memory_order_relaxed) ? WorkerPort::Woken::kCancelled
                                                     : WorkerPort::Woken::kOnTime;
}

class WorkerLoop {
 public:
  // Allocates the workspace and draws the first minibatch, before the run's clock starts.
  // `planned`: this worker's --fail, or null.
  WorkerLoop(const Model& model, int batch, DelayMode mode, MinibatchSampler sampler,
             const PlannedFailure* planned);
  // Runs until the run stops or the worker fails. `start`: the run's time zero (--fail times
  // count from it); `since`: when this process began the run (the first idle time counts from
  // there: a resumed run began later). An exception (the model's, the machine's) goes to the
  // caller.
  void run(WorkerPort& port, EngineClock::time_point start, EngineClock::time_point since);

 private:
  using Woken = WorkerPort::Woken;
  // port.sleep_until, aimed early by how late this worker's timed sleeps wake up.
  Woken sleep_until(WorkerPort& port, EngineClock::time_point until);

  const Model& model_;
  DelayMode mode_;
  MinibatchSampler sampler_;
  std::unique_ptr<Workspace> ws_;
  Batch batch_;  // the next minibatch, drawn before it is needed
  const PlannedFailure* planned_;
  EngineClock::time_point fail_at_ = EngineClock::time_point::max();  // none planned: max()
  EngineClock::time_point last_end_{};
  GradientClock gradient_time_;
  RunningMean late_s_;  // how late its own timed sleeps wake up
};

}  // namespace stalesgd
