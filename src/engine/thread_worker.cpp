// The real-thread engine's worker side: the shared WorkerLoop (worker_loop.hpp) on a port over
// the worker's WorkerSlot, which the server fills, releases and cuts under the slot's mutex. The
// server's side is thread_engine.cpp.
#include <sys/prctl.h>

#include <algorithm>

#include <fmt/format.h>

#include "engine/thread_engine.hpp"
#include "engine/worker_loop.hpp"
#include "stalesgd/util/seed.hpp"
#include "util/fault_point.hpp"

namespace stalesgd {

class ThreadEngine::SlotPort final : public WorkerPort {
 public:
  SlotPort(ThreadEngine& engine, int w)
      : engine_(engine), w_(w), slot_(engine.slots_[static_cast<std::size_t>(w)]) {}

  Taken take(EngineClock::time_point fail_at, double own_lead_s) override {
    std::unique_lock lock(slot_.mu);
    const auto ready = [&] { return slot_.stop || (slot_.has_assignment && slot_.released); };
    if (!ready() && fail_at != EngineClock::time_point::max()) {
      slot_.cv.wait_until(lock, fail_at, ready);
    } else if (!ready()) {
      slot_.cv.wait(lock, ready);
    }
    if (slot_.stop) return {.stopped = true};
    if (EngineClock::now() >= fail_at) return {.failing = true};
    slot_.has_assignment = false;
    slot_.cancel.store(false, std::memory_order_relaxed);
    slot_.pin = std::move(slot_.assigned);
    slot_.taken_ticket = slot_.ticket;
    if (slot_.release_timed) slot_.release_late.add_lateness(slot_.release_aim);
    // The server's timers read the lead too (ServerTimers releases that long before X).
    if (own_lead_s >= 0.0) slot_.lead_s = own_lead_s;
    return {.at = slot_.assigned_at,
            .x = slot_.assigned_x,
            .busy_from = slot_.busy_since,
            .lead_s = slot_.lead_s,
            .params = slot_.pin.params()};
  }
  bool sleeps_first() const override { return engine_.wake_->worker_sleeps(); }
  Woken sleep_until(EngineClock::time_point until) override { return sleep_on(slot_, until); }
  std::span<float> gradient() override { return slot_.grad; }
  const std::atomic<bool>& cancel() const override { return slot_.cancel; }
  void account(double idle_s, bool computed, double busy_s) override {
    std::lock_guard lock(slot_.mu);  // a checkpoint reads the stats under it
    slot_.stats.idle_s += idle_s;
    if (computed) ++slot_.stats.computed;
    slot_.stats.busy_s += busy_s;
  }
  void deliver(float loss) override { engine_.deliver(w_, loss); }
  // A worker asleep holds no version: buffers stay at most P + 2.
  void release() override { slot_.pin.release(); }
  void fail(FailureKind kind, EngineClock::time_point at) override {
    engine_.fail_worker(w_, kind, at);
  }

 private:
  ThreadEngine& engine_;
  const int w_;
  WorkerSlot& slot_;
};

void ThreadEngine::worker_main(int w) {
  // Timer slack 1 ns: the default 50 us would bias every sleep of a delay-dominated run.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  try {
    WorkerSlot& slot = slots_[static_cast<std::size_t>(w)];
    slot.grad.resize(ctx_.model->num_params());
    slot.stats.worker = w;
    WorkerLoop loop(*ctx_.model, o_.batch, o_.delay_mode,
                    ctx_.sampler(w, derive_seed(server_.stream_seed(), SeedStream::kSampler, w)),
                    ctx_.run.failures().of(w));
    {
      std::unique_lock lock(start_mu_);
      start_cv_.wait(lock, [&] { return started_; });
    }
    fault_point("worker");
    SlotPort port(*this, w);
    loop.run(port, start_, resumed_from_);
  } catch (...) {
    server_.fail_thread(caught_failure(fmt::format("worker {}", w)));
  }
}

void ThreadEngine::deliver(int w, float loss) {
  WorkerSlot& slot = slots_[static_cast<std::size_t>(w)];
  const auto pushed_at = EngineClock::now();  // before any lock: waiting is the server's time
  if (o_.server == ServerPlacement::kThread) {
    // The server reads slot.grad while this worker waits for its next assignment, which only
    // the server can give; the pin travels with the push and is released by the server.
    pushes_.push(Push{w, slot.taken_ticket, loss, pushed_at, std::move(slot.pin)});
    return;
  }
  std::lock_guard lock(server_.mutex());
  server_.serve(push_of(w, slot.taken_ticket, loss, pushed_at, slot.pin));
}

}  // namespace stalesgd
