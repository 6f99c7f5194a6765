// WorkerLoop (engine/worker_loop.hpp), the one worker loop of the thread and MPI engines, driven
// by a scripted port with a real softmax model on MNIST: the order of its steps, a cut while it
// sleeps, the add and pad modes' sleeps, and a planned failure. The engines' own tests run it on
// real threads and MPI ranks.
#include <catch2/catch.hpp>

#include <deque>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine_test_util.hpp"
#include "engine/worker_loop.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

namespace {

// Hands out scripted assignments, answers each sleep from a script (sleeping when it runs to its
// time), and writes down each call.
class ScriptedPort final : public WorkerPort {
 public:
  explicit ScriptedPort(const Model& model)
      : params_(model.num_params(), 0.0f), grad_(model.num_params()) {}
  std::deque<EngineClock::duration> xs;  // one assignment each, then the run stops
  std::deque<Woken> sleeps;              // each sleep's answer; kOnTime once they run out
  bool first = true;                     // sleeps_first()
  std::vector<std::string> calls;
  std::vector<EngineClock::time_point> sleep_aims;
  EngineClock::time_point last_at{};
  EngineClock::duration last_x{};
  int computed = 0;

  Taken take(EngineClock::time_point fail_at, double own_lead_s) override {
    calls.push_back("take");
    if (EngineClock::now() >= fail_at) return {.failing = true};
    if (xs.empty()) return {.stopped = true};
    last_at = EngineClock::now();
    last_x = xs.front();
    xs.pop_front();
    return {
        .at = last_at, .x = last_x, .busy_from = last_at, .lead_s = own_lead_s, .params = params_};
  }
  bool sleeps_first() const override { return first; }
  Woken sleep_until(EngineClock::time_point until) override {
    calls.push_back("sleep");
    sleep_aims.push_back(until);
    Woken w = Woken::kOnTime;
    if (!sleeps.empty()) {
      w = sleeps.front();
      sleeps.pop_front();
    }
    if (w == Woken::kOnTime) std::this_thread::sleep_until(until);  // as a timed wait would
    return w;
  }
  std::span<float> gradient() override {
    calls.push_back("gradient");
    return grad_;
  }
  const std::atomic<bool>& cancel() const override { return cancel_; }
  void account(double, bool was_computed, double busy_s) override {
    calls.push_back(was_computed ? "account+" : "account-");
    computed += was_computed;
    CHECK(busy_s >= 0.0);
  }
  void deliver(float loss) override {
    calls.push_back("deliver");
    CHECK(std::isfinite(loss));
  }
  void release() override { calls.push_back("release"); }
  void fail(FailureKind kind, EngineClock::time_point) override {
    calls.push_back(kind == FailureKind::kCrash ? "crash" : "hang");
  }

 private:
  std::vector<float> params_;
  std::vector<float> grad_;
  std::atomic<bool> cancel_{false};
};

std::string joined(const std::vector<std::string>& calls) {
  std::string out;
  for (const auto& c : calls) out += (out.empty() ? "" : " ") + c;
  return out;
}

struct Setup {
  std::unique_ptr<Model> model = softmax_for(mnist());
  MinibatchSampler sampler() const { return MinibatchSampler(mnist().train, 16, 7); }
};

}  // namespace

TEST_CASE("worker loop: take, sleep first, compute, sleep out X, deliver, release", "[engine]") {
  Setup s;
  ScriptedPort port(*s.model);
  port.xs = {std::chrono::milliseconds(5), std::chrono::milliseconds(5)};
  WorkerLoop loop(*s.model, 16, DelayMode::kPad, s.sampler(), nullptr);
  const auto t0 = EngineClock::now();
  loop.run(port, t0, t0);
  CHECK(joined(port.calls) ==
        "take sleep gradient sleep account+ deliver release "
        "take sleep gradient sleep account+ deliver release take");
  CHECK(port.computed == 2);
  // Pad: before any gradient is timed the worker computes at once (aims at the assignment),
  // then sleeps out X; the second minibatch starts its gradient about its time before X.
  REQUIRE(port.sleep_aims.size() == 4);
  CHECK(port.sleep_aims[1] <= port.last_at + port.last_x);
  CHECK(port.sleep_aims[2] < port.last_at + port.last_x);
}

TEST_CASE("worker loop: a minibatch cut while its worker sleeps costs no gradient", "[engine]") {
  Setup s;
  ScriptedPort port(*s.model);
  port.xs = {std::chrono::milliseconds(5), std::chrono::milliseconds(5)};
  port.sleeps = {WorkerPort::Woken::kCancelled};
  WorkerLoop loop(*s.model, 16, DelayMode::kAdd, s.sampler(), nullptr);
  const auto t0 = EngineClock::now();
  loop.run(port, t0, t0);
  // Add: one sleep (X) before the gradient, none after.
  CHECK(joined(port.calls) ==
        "take sleep account- release take sleep gradient account+ deliver release take");
}

TEST_CASE("worker loop: the server's timers wake it, so it computes at once", "[engine]") {
  Setup s;
  ScriptedPort port(*s.model);
  port.first = false;
  port.xs = {std::chrono::milliseconds(1)};
  WorkerLoop loop(*s.model, 16, DelayMode::kAdd, s.sampler(), nullptr);
  const auto t0 = EngineClock::now();
  loop.run(port, t0, t0);
  CHECK(joined(port.calls) == "take gradient account+ deliver release take");
}

TEST_CASE("worker loop: a stop ends it wherever it waits, and --fail at its time", "[engine]") {
  Setup s;
  {
    ScriptedPort port(*s.model);
    port.xs = {std::chrono::milliseconds(5)};
    port.sleeps = {WorkerPort::Woken::kOnTime, WorkerPort::Woken::kStopped};
    WorkerLoop loop(*s.model, 16, DelayMode::kPad, s.sampler(), nullptr);
    const auto t0 = EngineClock::now();
    loop.run(port, t0, t0);
    CHECK(joined(port.calls) == "take sleep gradient sleep");  // nothing delivered
  }
  {
    // A crash planned at 0 s: the worker fails at its first take.
    const PlannedFailure crash{0, FailureKind::kCrash, 0.0};
    ScriptedPort port(*s.model);
    port.xs = {std::chrono::milliseconds(5)};
    WorkerLoop loop(*s.model, 16, DelayMode::kPad, s.sampler(), &crash);
    const auto t0 = EngineClock::now();
    loop.run(port, t0, t0);
    CHECK(joined(port.calls) == "take crash");
  }
  {
    // A hang planned inside the minibatch's X: the pad sleep ends at it and the worker hangs
    // instead of delivering.
    const PlannedFailure hang{0, FailureKind::kHang, 0.05};
    ScriptedPort port(*s.model);
    port.xs = {std::chrono::seconds(30)};
    WorkerLoop loop(*s.model, 16, DelayMode::kPad, s.sampler(), &hang);
    const auto t0 = EngineClock::now();
    loop.run(port, t0, t0);
    CHECK(joined(port.calls) == "take sleep gradient sleep account+ release hang");
    REQUIRE(port.sleep_aims.size() == 2);
    CHECK(port.sleep_aims[1] <= t0 + std::chrono::milliseconds(50));
  }
}
