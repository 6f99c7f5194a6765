// shifted-exp:shift=<s>,mean=<m>: s + Exp(mean m); E[X] = s + m, quantile s - m log(1 - p).
#include <catch2/catch.hpp>

#include <cmath>

#include "straggler/straggler_test_util.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

TEST_CASE("shifted-exp matches its mean, quantiles and cdf", "[straggler][shifted-exp]") {
  const auto d = parse_ok("shifted-exp:shift=5ms,mean=10ms");
  CHECK(d->mean() == Approx(0.015).epsilon(1e-15));
  for (const double p : {0.1, 0.5, 0.9, 0.99}) {
    CHECK(d->quantile(p) == Approx(0.005 - 0.01 * std::log(1 - p)).epsilon(1e-14));
  }
  CHECK(d->cdf(0.005) == 0.0);
  CHECK(d->cdf(0.004) == 0.0);
  CHECK(d->quantile(0.0) == 0.005);
  const Draws draws = draw(*d);
  check_mean(draws, 0.015);
  check_quantiles(draws, *d);
  check_cdf_inverts_quantile(*d);
  CHECK(draws.sorted.front() > 0.005);
}

TEST_CASE("shifted-exp exposes its parameters and round-trips", "[straggler][shifted-exp]") {
  const auto d = parse_ok("shifted-exp:mean=10ms,shift=5ms");  // any order
  const auto params = d->as_shifted_exponential();
  REQUIRE(params);
  CHECK(params->shift_s == 0.005);
  CHECK(params->mean_s == 0.01);
  CHECK(d->describe() == "shifted-exp:shift=5ms,mean=10ms");
  check_round_trip(*d);
  CHECK(parse_ok("shifted-exp:shift=0s,mean=1s")->mean() == 1.0);  // shift 0 is allowed
}

TEST_CASE("shifted-exp errors", "[straggler][shifted-exp]") {
  CHECK(parse_error("shifted-exp:shift=5ms") ==
        "delay spec 'shifted-exp:shift=5ms': missing parameter 'mean' for shifted-exp; use "
        "shifted-exp:shift=<time>,mean=<time>, e.g. shifted-exp:shift=5ms,mean=10ms");
  CHECK_THAT(parse_error("shifted-exp:shift=5ms,mean=0s"),
             Contains("shifted-exp mean must be > 0, got '0s'"));
  CHECK_THAT(parse_error("shifted-exp:shift=-1ms,mean=1s"), Contains("time '-1ms' is negative"));
}
