// The rules' closed forms under the fixed computation model (worker i's every minibatch takes
// tau_i; rule_registry.hpp's fixed_form, docs/theory.md "Fixed per-worker times"): each equal
// to the Monte Carlo of the rule's own state machine, and none where the rule carries work over
// from one round to the next.
#include <catch2/catch.hpp>

#include "stalesgd/straggler/order_statistics.hpp"
#include "stalesgd/theory/runtime.hpp"

using namespace stalesgd;

namespace {

// Worker i takes 2(i + 1) ms, P = 8 (experiments/the-field.toml's `fixed`).
const char* const kFixed =
    "const:2ms;w1=const:4ms;w2=const:6ms;w3=const:8ms;w4=const:10ms;w5=const:12ms;"
    "w6=const:14ms;w7=const:16ms";

RuleConfig config(RuleSpec spec) {
  auto c = resolve_rule(spec, 8);
  REQUIRE(c.ok());
  return *c;
}

}  // namespace

TEST_CASE("fixed per-worker times: a profile of constants, the k-th finish and the rate",
          "[straggler]") {
  auto fixed = StragglerProfile::parse("const:2ms;w1=x3", 2);
  REQUIRE(fixed.ok());
  REQUIRE(fixed->fixed_times());
  CHECK(*fixed->fixed_times() == std::vector{0.002, 0.006});
  for (const char* spec : {"exp:mean=1ms", "const:2ms;w1@1s=x2", "const:2ms;w0=uniform:1ms..3ms"}) {
    INFO(spec);
    auto p = StragglerProfile::parse(spec, 2);
    REQUIRE(p.ok());
    CHECK_FALSE(p->fixed_times());
  }
  // Workers of 1 and 3: finishes at 1, 2, 3, 3, 4, 5, 6, 6, ...
  const std::vector times{1.0, 3.0};
  CHECK(kth_finish(times, 1) == 1.0);
  CHECK(kth_finish(times, 3) == 3.0);
  CHECK(kth_finish(times, 4) == 3.0);
  CHECK(kth_finish(times, 5) == 4.0);
  CHECK(finish_rate(times) == Approx(4.0 / 3.0));
}

TEST_CASE("each rule's fixed form is its Monte Carlo under fixed heterogeneous times", "[theory]") {
  auto profile = StragglerProfile::parse(kFixed, 8);
  REQUIRE(profile.ok());
  RuleSpec mindflayer{"mindflayer", 2};
  mindflayer.params.set("time-limit",
                        std::string("10ms;w0=1ms"));  // worker 0 under its 2 ms, 5-7 over 10 ms
  RuleSpec interrupted{"rennala", 11};
  interrupted.params.set("old-point", std::string("interrupt"));
  const std::vector<std::pair<RuleSpec, double>> cases{
      {{"sync"}, 0.016},      {{"k-sync", 3}, 0.006},
      {{"m-sync", 5}, 0.010}, {{"k-batch-sync", 4}, 0.006},  // finishes 2, 4, 4, 6, 6, ...
      {interrupted, 0.012},                                  // S > P: the 11th finish
      {{"async"}, 0.0},       {{"k-batch-async", 4}, 0.0},
      {{"fedbuff", 3}, 0.0},  {mindflayer, 0.020},  // 2 x min(tau_i, t_i) at most 2 x 10 ms
  };
  double rate = 0.0;
  for (int i = 0; i < 8; ++i) rate += 1.0 / (0.002 * (i + 1));
  for (const auto& [spec, expected] : cases) {
    INFO(spec.name << " " << spec.k);
    const auto c = config(spec);
    const auto closed = closed_form_runtime(c, *profile);
    REQUIRE(closed);
    CHECK_FALSE(closed->upper_bound);
    // The rate rules' forms are K / sum_i (1 / tau_i).
    const double want = expected > 0.0 ? expected : std::max(1, c.k) / rate;
    CHECK(closed->seconds == Approx(want));
    const auto mc = monte_carlo_runtime(c, *profile, 20000, 1);
    REQUIRE(mc.ok());
    CHECK(mc->seconds == Approx(closed->seconds).epsilon(2e-3));
  }
  // Work carried from one round into the next has no fixed form here: Monte Carlo alone.
  RuleSpec ringmaster{"ringmaster"};
  ringmaster.params.set("staleness-threshold", std::int64_t{2});
  for (const RuleSpec& spec :
       {RuleSpec{"rennala", 8}, RuleSpec{"malenia", 8}, RuleSpec{"k-async", 4}, ringmaster}) {
    INFO(spec.name);
    CHECK_FALSE(closed_form_runtime(config(spec), *profile));
  }
}

TEST_CASE("mindflayer's i.i.d. form is the paper's round bound B max t_i", "[theory]") {
  RuleSpec spec{"mindflayer", 3};
  spec.params.set("time-limit", std::string("10ms;w2=25ms"));
  auto profile = StragglerProfile::parse("exp:mean=10ms", 8);
  REQUIRE(profile.ok());
  const auto c = config(spec);
  const auto bound = closed_form_runtime(c, *profile);
  REQUIRE(bound);
  CHECK(bound->upper_bound);
  CHECK(bound->seconds == Approx(0.075));
  const auto mc = monte_carlo_runtime(c, *profile, 20000, 1);
  REQUIRE(mc.ok());
  CHECK(mc->seconds < bound->seconds);
}
