// GradientRecord::duration_s in every engine: the virtual clock records exactly the simulated
// time (max(C, X) in pad mode, C + X in add mode); the real-clock engines at least the delay
// they sleep out (lower bounds only: no assert depends on how fast the machine is).
#include <catch2/catch.hpp>

#include "engine/engine_test_util.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

TEST_CASE("gradients: the virtual clock records each minibatch's simulated duration",
          "[engine][gradients]") {
  struct Case {
    DelayMode mode;
    double compute_s;
    double expected_s;
  };
  const Case c = GENERATE(Case{DelayMode::kAdd, 0.001, 0.006}, Case{DelayMode::kPad, 0.001, 0.005},
                          Case{DelayMode::kPad, 0.008, 0.008});
  INFO(to_string(c.mode) << ", compute " << c.compute_s);
  auto o = quick_options("k-sync", 3, 2, "const:5ms");
  o.clock = ClockKind::kVirtual;
  o.delay_mode = c.mode;
  o.compute_time_s = c.compute_s;
  o.iterations = 40;
  const RunRecord run = run_ok(o);
  REQUIRE(run.gradients.size() == 80);
  for (const auto& g : run.gradients) CHECK(g.duration_s == Approx(c.expected_s).margin(1e-12));
}

TEST_CASE("gradients: the virtual clock's durations are the drawn delays with no compute time",
          "[engine][gradients]") {
  auto o = quick_options("async", 4, 0, "uniform:2ms..4ms");
  o.clock = ClockKind::kVirtual;
  o.iterations = 200;
  const RunRecord run = run_ok(o);
  REQUIRE(run.gradients.size() == 200);
  double sum = 0.0;
  for (const auto& g : run.gradients) {
    CHECK(g.duration_s >= 0.002 - 1e-12);
    CHECK(g.duration_s <= 0.004 + 1e-12);
    sum += g.duration_s;
  }
  // 200 uniform draws on [2, 4] ms: the mean's SE is 0.58 ms / sqrt(200) = 0.04 ms.
  CHECK(sum / 200 == Approx(0.003).margin(0.0002));
}

TEST_CASE("gradients: real-clock engines record at least the delay each minibatch sleeps out",
          "[engine][gradients]") {
  const std::string engine = GENERATE("inline", "thread", "hogwild");
  INFO("--server " << engine);
  auto o = quick_options("async", 2, 0, "const:2ms");
  o.server = engine == "inline"   ? ServerPlacement::kInline
             : engine == "thread" ? ServerPlacement::kThread
                                  : ServerPlacement::kHogwild;
  o.iterations = 30;
  const RunRecord run = run_ok(o);
  REQUIRE(run.gradients.size() >= 30);
  // The worker's timed waits aim early by their measured lateness (at most 0.3 ms), so a
  // minibatch may end a hair before its 2 ms.
  for (const auto& g : run.gradients) CHECK(g.duration_s > 0.0015);
}

TEST_CASE("gradients: the sequential trainer records each minibatch's compute time",
          "[engine][gradients]") {
  auto o = quick_options("sync", 1, 0, "none");
  o.sequential = true;
  o.iterations = 20;
  const RunRecord run = run_ok(o);
  REQUIRE(run.gradients.size() == 20);
  for (const auto& g : run.gradients) {
    CHECK(g.duration_s > 0.0);
    CHECK(g.duration_s <= run.wall_s);
  }
}
