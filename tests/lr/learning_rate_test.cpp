// Learning-rate rules: schedules pinned exactly, and the one-line errors.
#include "stalesgd/lr/learning_rate.hpp"

#include <catch2/catch.hpp>

using namespace stalesgd;
using Catch::Matchers::Contains;

namespace {
double at(const LearningRate& lr, std::uint64_t j, std::uint64_t staleness = 0, double d2 = 0) {
  return lr.rate({j, staleness, d2});
}
}  // namespace

TEST_CASE("fixed, step and exponential schedules", "[lr]") {
  auto fixed = make_learning_rate(0.1, "fixed");
  REQUIRE(fixed.ok());
  CHECK(at(**fixed, 0) == 0.1);
  CHECK(at(**fixed, 123456, 9) == 0.1);

  auto step = make_learning_rate(0.1, "step:every=100,factor=0.5");
  REQUIRE(step.ok());
  CHECK(at(**step, 99) == 0.1);
  CHECK(at(**step, 100) == 0.05);
  CHECK(at(**step, 250) == 0.025);
  CHECK((*step)->describe() == "step:every=100,factor=0.5");

  auto exp = make_learning_rate(0.2, "exp:decay=0.5");
  REQUIRE(exp.ok());
  CHECK(at(**exp, 3) == Approx(0.025));
}

TEST_CASE("staleness-aware rules", "[lr]") {
  auto zhang = make_learning_rate(0.1, "inv-staleness");
  REQUIRE(zhang.ok());
  CHECK(at(**zhang, 5, 0) == 0.1);
  CHECK(at(**zhang, 5, 1) == 0.1);
  CHECK(at(**zhang, 5, 4) == Approx(0.025));
  CHECK_FALSE((*zhang)->needs_distance());

  auto dutta = make_learning_rate(0.1, "dutta:c=0.02");
  REQUIRE(dutta.ok());
  CHECK((*dutta)->needs_distance());
  CHECK(at(**dutta, 1, 3, 0.0) == 0.1);  // fresh: the cap
  CHECK(at(**dutta, 1, 3, 0.1) == 0.1);  // 0.02 / 0.1 = 0.2 > cap
  CHECK(at(**dutta, 1, 3, 1.0) == Approx(0.02));

  // Koloskova et al. 2022: the full step up to delay C, then lr C / tau.
  auto adaptive = make_learning_rate(0.1, "delay-adaptive:c=4");
  REQUIRE(adaptive.ok());
  CHECK(at(**adaptive, 9, 0) == 0.1);
  CHECK(at(**adaptive, 9, 4) == 0.1);
  CHECK(at(**adaptive, 9, 8) == Approx(0.05));
  CHECK(at(**adaptive, 9, 400) == Approx(0.001));
  CHECK_FALSE((*adaptive)->needs_distance());
  CHECK_THAT(make_learning_rate(0.1, "delay-adaptive").error().message,
             Catch::Matchers::Contains("missing c"));
  CHECK_THAT(make_learning_rate(0.1, "delay-adaptive:c=0.5").error().message,
             Catch::Matchers::Contains("c must be at least 1"));

  // With L, the paper's own rate: 1 / (4 L C) up to delay C, 1 / (4 L tau) beyond; --lr unused.
  auto formula = make_learning_rate(0.1, "delay-adaptive:c=4,L=2.5");
  REQUIRE(formula.ok());
  CHECK(at(**formula, 9, 0) == Approx(1.0 / 40));
  CHECK(at(**formula, 9, 4) == Approx(1.0 / 40));
  CHECK(at(**formula, 9, 10) == Approx(1.0 / 100));
  CHECK_THAT(make_learning_rate(0.1, "delay-adaptive:c=4,L=0").error().message,
             Catch::Matchers::Contains("L must be positive"));
}

TEST_CASE("bad --lr and --lr-rule give one clear line", "[lr]") {
  CHECK_THAT(make_learning_rate(0.0, "fixed").error().message,
             Contains("--lr 0 must be a positive"));
  CHECK_THAT(make_learning_rate(-1, "fixed").error().message, Contains("positive"));
  CHECK_THAT(make_learning_rate(0.1, "cosine").error().message,
             Contains("unknown --lr-rule 'cosine'"));
  CHECK_THAT(make_learning_rate(0.1, "step:every=10").error().message, Contains("missing factor"));
  CHECK_THAT(make_learning_rate(0.1, "step:every=10,factor=2").error().message,
             Contains("0 < factor <= 1"));
  CHECK_THAT(make_learning_rate(0.1, "exp:decay=abc").error().message,
             Contains("'abc' is not a number"));
  CHECK_THAT(make_learning_rate(0.1, "fixed:x=1").error().message,
             Contains("unknown parameter 'x'"));
  CHECK_THAT(make_learning_rate(0.1, "dutta").error().message, Contains("missing c"));
}

// Found by fuzz/experiment_toml.cpp (docs/reliability.md): lr_rule = "step:every=444...4100"
// was cast to an unsigned 64-bit integer, undefined behaviour (UBSan: outside the range of
// representable values).
TEST_CASE("step decay refuses an every too large for 64 bits", "[lr][fuzz]") {
  const std::string rule = "step:every=" + std::string(110, '4') + "100,factor=0.5";
  CHECK(make_learning_rate(0.1, rule).error().message ==
        "--lr-rule '" + rule + "': need a whole every from 1 to 1e18 and 0 < factor <= 1");
  CHECK_THAT(make_learning_rate(0.1, "step:every=1e30,factor=0.5").error().message,
             Contains("need a whole every from 1 to 1e18"));
  auto largest = make_learning_rate(0.1, "step:every=1e18,factor=0.5");
  REQUIRE(largest.ok());
  CHECK((*largest)->describe() == "step:every=1000000000000000000,factor=0.5");
}
