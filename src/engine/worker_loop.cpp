// WorkerLoop: take, sleep first, compute last, wait out X, deliver (the design: worker_loop.hpp).
#include "engine/worker_loop.hpp"

#include <algorithm>
#include <utility>

namespace stalesgd {

WorkerLoop::WorkerLoop(const Model& model, int batch, DelayMode mode, MinibatchSampler sampler,
                       const PlannedFailure* planned)
    : model_(model),
      mode_(mode),
      sampler_(std::move(sampler)),
      ws_(model.make_workspace(batch)),
      batch_(sampler_.next()),
      planned_(planned) {}

WorkerLoop::Woken WorkerLoop::sleep_until(WorkerPort& port, EngineClock::time_point until) {
  const auto aim = until - to_duration(late_s_.value());
  const bool ahead = EngineClock::now() < aim;
  const Woken woken = port.sleep_until(aim);
  if (ahead && woken == Woken::kOnTime) late_s_.add_lateness(aim);
  return woken;
}

void WorkerLoop::run(WorkerPort& port, EngineClock::time_point start,
                     EngineClock::time_point since) {
  if (planned_ != nullptr) fail_at_ = start + to_duration(planned_->at_s);
  last_end_ = since;
  const auto failing = [&] { return planned_ != nullptr && EngineClock::now() >= fail_at_; };
  // Fails now; a sleep cut at the failure time may wake a hair early: it failed at fail_at_.
  const auto fail = [&](EngineClock::time_point now) {
    port.fail(planned_->kind, std::max(now, fail_at_));
  };
  for (;;) {
    const WorkerPort::Taken taken = port.take(fail_at_, gradient_time_.lead_s());
    if (taken.stopped) return;
    if (taken.failing) return fail(EngineClock::now());
    const double idle_s =
        std::max(0.0, std::chrono::duration<double>(taken.busy_from - last_end_).count());
    // Sleep first, compute last: a minibatch the rule cuts while its worker sleeps then costs
    // no gradient. A sleep that would outlast the failure time ends there (aimed early by the
    // lateness, so it counts as reached even if the clock is a hair short of it).
    Woken woken = Woken::kOnTime;
    bool fails_after_sleep = false;
    if (port.sleeps_first()) {
      const auto until = compute_from(mode_, taken.at, taken.x, taken.lead_s);
      fails_after_sleep = fail_at_ <= until;
      woken = sleep_until(port, std::min(fail_at_, until));
    }
    if (woken == Woken::kStopped) return;
    if (woken == Woken::kOnTime && (fails_after_sleep || failing())) {
      port.release();
      return fail(EngineClock::now());
    }
    std::optional<float> loss;
    const bool spent = woken == Woken::kOnTime;  // batch_ goes into a gradient
    if (spent) {
      const std::span<float> grad = port.gradient();
      loss = gradient_time_.time([&] {
        return model_.loss_and_gradient(taken.params, batch_, grad, *ws_, &port.cancel());
      });
      if (!loss) woken = Woken::kCancelled;
    }
    fails_after_sleep = false;
    if (woken == Woken::kOnTime && mode_ == DelayMode::kPad) {
      fails_after_sleep = fail_at_ <= taken.at + taken.x;
      woken = sleep_until(port, std::min(fail_at_, taken.at + taken.x));
    }
    if (woken == Woken::kStopped) return;
    last_end_ = EngineClock::now();
    port.account(idle_s, loss.has_value(),
                 std::chrono::duration<double>(last_end_ - taken.busy_from).count());
    if (woken == Woken::kOnTime && (fails_after_sleep || failing())) {
      port.release();
      return fail(last_end_);
    }
    if (woken == Woken::kOnTime) port.deliver(*loss);
    port.release();  // a worker asleep holds no version (thread engine: buffers stay <= P + 2)
    // The next minibatch is gathered after the delivery: in a sync round this overlaps the
    // wait for the others instead of delaying the round's last gradient.
    if (spent) batch_ = sampler_.next();
  }
}

}  // namespace stalesgd
