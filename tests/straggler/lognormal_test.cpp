// lognormal:median=<m>,sigma=<s> (or mean=): X = m exp(s Z); mean m exp(s^2/2).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "straggler/straggler_test_util.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

TEST_CASE("lognormal matches its mean, quantiles and cdf", "[straggler][lognormal]") {
  const auto d = parse_ok("lognormal:median=10ms,sigma=0.5");
  CHECK(d->mean() == Approx(0.01 * std::exp(0.125)).epsilon(1e-14));
  // Phi^-1 at 0.1, 0.5, 0.9, 0.99.
  const double z[] = {-1.2815515655446004, 0.0, 1.2815515655446004, 2.3263478740408408};
  const double p[] = {0.1, 0.5, 0.9, 0.99};
  for (int i = 0; i < 4; ++i)
    CHECK(d->quantile(p[i]) == Approx(0.01 * std::exp(0.5 * z[i])).epsilon(1e-13));
  CHECK(d->cdf(0.01) == Approx(0.5).epsilon(1e-15));
  CHECK(d->cdf(0.0) == 0.0);
  const Draws draws = draw(*d);
  check_mean(draws, d->mean());
  check_quantiles(draws, *d);
  check_cdf_inverts_quantile(*d);
  CHECK(d->describe() == "lognormal:median=10ms,sigma=0.5");
  check_round_trip(*d);
}

TEST_CASE("lognormal by mean keeps the mean exactly", "[straggler][lognormal]") {
  const auto d = parse_ok("lognormal:mean=10ms,sigma=0.5");
  CHECK(d->mean() == 0.01);
  CHECK(d->quantile(0.5) == Approx(0.01 * std::exp(-0.125)).epsilon(1e-14));
  CHECK(d->describe() == "lognormal:mean=10ms,sigma=0.5");
  check_round_trip(*d);
  check_mean(draw(*d), 0.01);
}

TEST_CASE("lognormal errors", "[straggler][lognormal]") {
  CHECK_THAT(parse_error("lognormal:median=10ms,mean=10ms,sigma=1"),
             Contains("lognormal takes median or mean, not both"));
  CHECK_THAT(parse_error("lognormal:sigma=1"),
             Contains("missing parameter 'median' for lognormal"));
  CHECK_THAT(parse_error("lognormal:median=10ms"),
             Contains("missing parameter 'sigma' for lognormal"));
  CHECK_THAT(parse_error("lognormal:median=10ms,sigma=-1"),
             Contains("lognormal sigma must be > 0, got '-1'"));
  CHECK_THAT(parse_error("lognormal:median=10ms,sigma=1,mu=2"),
             Contains("unknown parameter 'mu' for lognormal"));
}

// Found by fuzz/delay_spec.cpp (docs/reliability.md): by mean with a huge sigma the median
// mean exp(-s^2/2) was 0, and a draw 0 * exp(s z) = 0 * inf = NaN, a delay no engine can sleep.
TEST_CASE("lognormal by mean refuses a sigma whose median is 0", "[straggler][lognormal][fuzz]") {
  CHECK(parse_error("lognormal:mean=05ms,sigma=0111111311111") ==
        "delay spec 'lognormal:mean=05ms,sigma=0111111311111': lognormal sigma 111111311111 is too "
        "large for mean=5ms: the median mean*exp(-sigma^2/2) is 0 in double precision; use a "
        "smaller sigma, e.g. lognormal:mean=10ms,sigma=0.5");
  CHECK_THAT(parse_error("lognormal:mean=5ms,sigma=39"), Contains("is too large for mean=5ms"));
  // Just below the limit the median is tiny but not 0: no NaN, and every draw is a number >= 0.
  const auto d = parse_ok("lognormal:mean=5ms,sigma=38");
  for (const double p : {0.0, 1e-300, 0.5, 1 - 1e-16, 1.0}) CHECK_FALSE(std::isnan(d->quantile(p)));
  for (const double x : draw(*d, 10'000).sorted) CHECK((std::isfinite(x) && x >= 0));
  // By median the same sigma has no such limit: draws are capped at the largest double.
  const Draws capped = draw(*parse_ok("lognormal:median=5ms,sigma=0111111311111"), 10'000);
  for (const double x : capped.sorted) CHECK((std::isfinite(x) && x >= 0));
  CHECK(capped.sorted.back() == std::numeric_limits<double>::max());
}
