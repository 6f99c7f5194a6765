// uniform:<lo>..<hi>: mean (lo + hi) / 2, quantile lo + p (hi - lo).
#include <catch2/catch.hpp>

#include <cmath>

#include "straggler/straggler_test_util.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

TEST_CASE("uniform matches its mean and quantiles", "[straggler][uniform]") {
  const auto d = parse_ok("uniform:5ms..15ms");
  CHECK(d->mean() == Approx(0.010));
  for (const double p : {0.1, 0.5, 0.9, 0.99}) CHECK(d->quantile(p) == Approx(0.005 + p * 0.010));
  CHECK(d->cdf(0.004) == 0.0);
  CHECK(d->cdf(0.016) == 1.0);
  const Draws draws = draw(*d);
  check_mean(draws, d->mean());
  check_quantiles(draws, *d);
  check_cdf_inverts_quantile(*d);
  CHECK(draws.sorted.front() >= 0.005);
  CHECK(draws.sorted.back() <= 0.015);
  CHECK(d->describe() == "uniform:5ms..15ms");
  check_round_trip(*d);
}

TEST_CASE("uniform with lo == hi is a constant", "[straggler][uniform]") {
  const auto d = parse_ok("uniform:2s..2s");
  Rng rng(3);
  CHECK(d->sample(rng) == 2.0);
  CHECK(d->cdf(2.0) == 1.0);
  CHECK(d->cdf(1.999) == 0.0);
}

TEST_CASE("uniform errors", "[straggler][uniform]") {
  CHECK(parse_error("uniform:15ms..5ms") ==
        "delay spec 'uniform:15ms..5ms': uniform lower bound 15ms is above the upper bound 5ms; "
        "write uniform:<lo>..<hi> with lo <= hi, e.g. uniform:5ms..15ms");
  CHECK_THAT(parse_error("uniform:5ms-15ms"), Contains("has no '..'; use uniform:<lo>..<hi>"));
  CHECK_THAT(parse_error("uniform:5..15ms"), Contains("uniform lower bound: time '5' has no unit"));
  CHECK_THAT(parse_error("uniform:5ms..15"),
             Contains("uniform upper bound: time '15' has no unit"));
}
