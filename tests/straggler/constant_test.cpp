// const:<time> and none: a fixed delay.
#include <catch2/catch.hpp>

#include "straggler/straggler_test_util.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

TEST_CASE("const gives the same delay every draw", "[straggler][constant]") {
  const auto d = parse_ok("const:10ms");
  const Draws draws = draw(*d, 1000);
  CHECK(draws.sorted.front() == 0.01);
  CHECK(draws.sorted.back() == 0.01);
  CHECK(d->mean() == 0.01);
  CHECK(d->cdf(0.0099) == 0.0);
  CHECK(d->cdf(0.01) == 1.0);
  for (const double p : {0.0, 0.1, 0.5, 0.9, 0.99, 1.0}) CHECK(d->quantile(p) == 0.01);
  CHECK(d->describe() == "const:10ms");
  CHECK_FALSE(d->as_shifted_exponential());
  check_quantiles(draws, *d);
  check_round_trip(*d);
}

TEST_CASE("none is a zero delay and const:0s describes as none", "[straggler][constant]") {
  const auto d = parse_ok("none");
  CHECK(d->mean() == 0.0);
  Rng rng(1);
  CHECK(d->sample(rng) == 0.0);
  CHECK(d->describe() == "none");
  CHECK(parse_ok("const:0ms")->describe() == "none");
  CHECK(parse_ok("  none ")->describe() == "none");
}

TEST_CASE("const errors name the problem and the fix", "[straggler][constant]") {
  CHECK(parse_error("const:10") ==
        "delay spec 'const:10': const: time '10' has no unit; write 10ms or 10s (units: ns, us, "
        "ms, s, m, h)");
  CHECK_THAT(parse_error("const:-5ms"), Contains("time '-5ms' is negative"));
  CHECK_THAT(parse_error("const"),
             Contains("const needs parameters; use const:<time>, e.g. const:10ms"));
  CHECK_THAT(parse_error("none:5ms"), Contains("none takes no parameters; write none"));
}
