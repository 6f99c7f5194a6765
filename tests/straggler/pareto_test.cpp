// pareto:scale=<x_m>,shape=<a>: cdf 1 - (x_m/x)^a, mean a x_m / (a - 1), infinite for a <= 1.
#include <catch2/catch.hpp>

#include <cmath>

#include "straggler/straggler_test_util.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

TEST_CASE("pareto with shape > 2 matches its mean and quantiles", "[straggler][pareto]") {
  // shape 5: finite variance, so the sample mean obeys the CLT.
  const auto d = parse_ok("pareto:scale=5ms,shape=5");
  CHECK(d->mean() == Approx(5 * 0.005 / 4).epsilon(1e-14));
  const Draws draws = draw(*d);
  check_mean(draws, d->mean());
  check_quantiles(draws, *d);
  check_cdf_inverts_quantile(*d);
  CHECK(draws.sorted.front() >= 0.005);
}

TEST_CASE("pareto quantiles and cdf follow the closed form", "[straggler][pareto]") {
  const auto d = parse_ok("pareto:scale=5ms,shape=1.5");
  for (const double p : {0.1, 0.5, 0.9, 0.99}) {
    CHECK(d->quantile(p) == Approx(0.005 * std::pow(1 - p, -1 / 1.5)).epsilon(1e-13));
  }
  CHECK(d->cdf(0.01) == Approx(1 - std::pow(0.5, 1.5)).epsilon(1e-14));
  CHECK(d->cdf(0.004) == 0.0);
  CHECK(d->mean() == Approx(1.5 * 0.005 / 0.5));
  check_quantiles(draw(*d), *d);  // quantiles need no moments
  check_cdf_inverts_quantile(*d);
  CHECK(d->describe() == "pareto:scale=5ms,shape=1.5");
  check_round_trip(*d);
}

TEST_CASE("pareto with shape <= 1 has an infinite mean but finite draws", "[straggler][pareto]") {
  CHECK(std::isinf(parse_ok("pareto:scale=5ms,shape=1")->mean()));
  const auto tiny = parse_ok("pareto:scale=1s,shape=0.001");
  CHECK(std::isinf(tiny->mean()));
  Rng rng(9);
  for (int i = 0; i < 1000; ++i) REQUIRE(std::isfinite(tiny->sample(rng)));
}

TEST_CASE("pareto errors", "[straggler][pareto]") {
  CHECK(parse_error("pareto:scale=5ms,shape=0") ==
        "delay spec 'pareto:scale=5ms,shape=0': pareto shape must be > 0, got '0'; use "
        "pareto:scale=<time>,shape=<number>, e.g. pareto:scale=5ms,shape=1.5");
  CHECK_THAT(parse_error("pareto:scale=5ms,shape=1.5ms"),
             Contains("pareto shape '1.5ms' is not a number"));
  CHECK_THAT(parse_error("pareto:scale=5ms,shape=inf"),
             Contains("pareto shape 'inf' is not finite"));
  CHECK_THAT(parse_error("pareto:scale=0ms,shape=2"), Contains("pareto scale must be > 0"));
  CHECK_THAT(parse_error("pareto:shape=2"), Contains("missing parameter 'scale' for pareto"));
}
