// The real-thread engine's worker side: take the assigned minibatch, sleep first, compute last,
// wait out X, deliver. The server's side is thread_engine.cpp.
#include <sys/prctl.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "engine/thread_engine.hpp"
#include "stalesgd/data/sampler.hpp"
#include "stalesgd/util/seed.hpp"
#include "util/fault_point.hpp"

namespace stalesgd {

void ThreadEngine::worker_main(int w) {
  // Timer slack 1 ns: the default 50 us would bias every sleep of a delay-dominated run.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  try {
    worker_loop(w);
  } catch (...) {
    server_.fail_thread(caught_failure(fmt::format("worker {}", w)));
  }
}

ThreadEngine::Woken ThreadEngine::sleep_until(WorkerSlot& slot, EngineClock::time_point until,
                                              RunningMean& late) {
  const auto cut = [&] { return slot.stop || slot.cancel.load(std::memory_order_relaxed); };
  std::unique_lock lock(slot.mu);
  const auto aim = until - to_duration(late.value());
  if (EngineClock::now() < aim && !slot.cv.wait_until(lock, aim, cut)) late.add_lateness(aim);
  if (slot.stop) return Woken::kStopped;
  return slot.cancel.load(std::memory_order_relaxed) ? Woken::kCancelled : Woken::kOnTime;
}

void ThreadEngine::worker_loop(int w) {
  WorkerSlot& slot = slots_[static_cast<std::size_t>(w)];
  const Model& model = *ctx_.model;
  slot.grad.resize(model.num_params());
  auto ws = model.make_workspace(o_.batch);
  MinibatchSampler sampler =
      ctx_.sampler(w, derive_seed(server_.stream_seed(), SeedStream::kSampler, w));
  WorkerRecord& stats = slot.stats;
  stats.worker = w;
  GradientClock gradient_time;
  RunningMean late_s;  // how late its own timed waits wake up
  Batch batch = sampler.next();
  {
    std::unique_lock lock(start_mu_);
    start_cv_.wait(lock, [&] { return started_; });
  }
  fault_point("worker");
  auto last_end = resumed_from_;
  // --fail: when this worker fails; it checks at each step (docs/rules.md, "Failed workers").
  const PlannedFailure* planned = ctx_.run.failures().of(w);
  const auto fail_at =
      planned != nullptr ? start_ + to_duration(planned->at_s) : EngineClock::time_point::max();
  const auto failing = [&] { return planned != nullptr && EngineClock::now() >= fail_at; };
  // Fails now; a sleep cut at the failure time may wake a hair early: it failed at fail_at.
  const auto fail = [&](EngineClock::time_point now) {
    fail_worker(w, planned->kind, std::max(now, fail_at));
  };
  for (;;) {
    EngineClock::time_point t0;
    EngineClock::time_point busy_from;
    EngineClock::duration x;
    double lead = -1.0;
    {
      std::unique_lock lock(slot.mu);
      const auto ready = [&] { return slot.stop || (slot.has_assignment && slot.released); };
      if (!ready() && planned != nullptr) {
        slot.cv.wait_until(lock, fail_at, ready);
      } else if (!ready()) {
        slot.cv.wait(lock, ready);
      }
      if (slot.stop) return;
      if (failing()) {
        lock.unlock();
        return fail(EngineClock::now());
      }
      slot.has_assignment = false;
      slot.cancel.store(false, std::memory_order_relaxed);
      slot.pin = std::move(slot.assigned);
      slot.taken_ticket = slot.ticket;
      t0 = slot.assigned_at;
      x = slot.assigned_x;
      busy_from = slot.busy_since;
      if (slot.release_timed) slot.release_late.add_lateness(slot.release_aim);
      // A worker with no estimate of its gradient time yet computes at once.
      if (gradient_time.lead_s() >= 0.0) slot.lead_s = gradient_time.lead_s();
      lead = slot.lead_s;
      stats.idle_s += std::max(0.0, std::chrono::duration<double>(busy_from - last_end).count());
    }
    // Sleep first, compute last: a minibatch the rule cuts while its worker sleeps then costs
    // no gradient. With the server's timers the release came at the wake-up time already.
    Woken woken = Woken::kOnTime;
    // A sleep that would outlast the failure time ends there (aimed early by the lateness, so
    // it counts as reached even if the clock is a hair short of it).
    bool fails_after_sleep = false;
    if (wake_->worker_sleeps()) {
      const auto until = compute_from(o_.delay_mode, t0, x, lead);
      fails_after_sleep = fail_at <= until;
      woken = sleep_until(slot, std::min(fail_at, until), late_s);
    }
    if (woken == Woken::kStopped) return;
    if (woken == Woken::kOnTime && (fails_after_sleep || failing())) {
      return fail(EngineClock::now());
    }
    std::optional<float> loss;
    const bool spent = woken == Woken::kOnTime;  // `batch` goes into a gradient
    if (spent) {
      loss = gradient_time.time([&] {
        return model.loss_and_gradient(slot.pin.params(), batch, slot.grad, *ws, &slot.cancel);
      });
      if (!loss) woken = Woken::kCancelled;
    }
    fails_after_sleep = false;
    if (woken == Woken::kOnTime && o_.delay_mode == DelayMode::kPad) {
      fails_after_sleep = fail_at <= t0 + x;
      woken = sleep_until(slot, std::min(fail_at, t0 + x), late_s);
    }
    if (woken == Woken::kStopped) return;
    last_end = EngineClock::now();
    {
      std::lock_guard lock(slot.mu);  // a checkpoint reads the stats under it
      if (loss) ++stats.computed;
      stats.busy_s += std::chrono::duration<double>(last_end - busy_from).count();
    }
    if (woken == Woken::kOnTime && (fails_after_sleep || failing())) return fail(last_end);
    if (woken == Woken::kOnTime) deliver(w, *loss);
    slot.pin.release();  // a worker asleep holds no version: buffers stay at most P + 2
    // The next minibatch is gathered after the delivery: in a sync round this overlaps the
    // wait for the others instead of delaying the round's last gradient.
    if (spent) batch = sampler.next();
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
