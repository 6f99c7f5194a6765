// mix:<w>*<spec>+...: mean sum w_i m_i, cdf sum w_i F_i, quantile by bisection on the cdf.
#include <catch2/catch.hpp>

#include <cmath>

#include "straggler/straggler_test_util.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

TEST_CASE("mixture with an atom matches its mean and quantiles", "[straggler][mixture]") {
  const auto d = parse_ok("mix:0.9*exp:mean=5ms+0.1*const:200ms");
  CHECK(d->mean() == Approx(0.9 * 0.005 + 0.1 * 0.2).epsilon(1e-14));
  // Below the atom: 0.9 (1 - exp(-x / 5ms)) = p.
  CHECK(d->quantile(0.5) == Approx(-0.005 * std::log(1 - 0.5 / 0.9)).epsilon(1e-12));
  CHECK(d->quantile(0.99) == 0.2);  // inside the atom's mass (0.9, 1]
  CHECK(d->cdf(0.2) == Approx(0.9 * (1 - std::exp(-40.0)) + 0.1));
  const Draws draws = draw(*d);
  check_mean(draws, d->mean());
  check_quantiles(draws, *d);
  CHECK(d->describe() == "mix:0.9*exp:mean=5ms+0.1*const:200ms");
  check_round_trip(*d);
}

TEST_CASE("continuous mixture: cdf inverts the bisected quantile", "[straggler][mixture]") {
  const auto d = parse_ok("mix:0.3*exp:mean=5ms+0.7*uniform:10ms..20ms");
  CHECK(d->mean() == Approx(0.3 * 0.005 + 0.7 * 0.015));
  const Draws draws = draw(*d);
  check_mean(draws, d->mean());
  check_quantiles(draws, *d);
  check_cdf_inverts_quantile(*d);
  CHECK(d->cdf(0.01) == Approx(0.3 * (1 - std::exp(-2.0))));
}

TEST_CASE("mixture parsing: exponents, spaces, three parts, infinite means",
          "[straggler][mixture]") {
  CHECK(parse_ok("mix:0.5*const:1e+1ms+0.5*none")->describe() == "mix:0.5*const:10ms+0.5*none");
  CHECK(parse_ok("mix: 0.2 * exp:mean=1ms + 0.3*const:2ms + 0.5*uniform:1ms..3ms")->describe() ==
        "mix:0.2*exp:mean=1ms+0.3*const:2ms+0.5*uniform:1ms..3ms");
  CHECK(parse_ok("mix:1*exp:mean=1ms")->mean() == Approx(0.001));
  CHECK(std::isinf(parse_ok("mix:0.5*pareto:scale=1ms,shape=1+0.5*none")->mean()));
  // A component quantile that overflows does not stop a finite mixture quantile.
  const auto heavy = parse_ok("mix:0.5*pareto:scale=1ms,shape=0.001+0.5*uniform:1s..2s");
  CHECK(std::isinf(heavy->quantile(0.9)));
  const double q = heavy->quantile(0.25);
  CHECK(q > 1.0);
  CHECK(q < 1.5);
  CHECK(heavy->cdf(q) == Approx(0.25).epsilon(1e-12));
  CHECK(std::isinf(heavy->quantile(1.0)));
  // Weights within 1e-9 of summing to 1 are accepted.
  CHECK(parse_ok("mix:0.3333333333*const:1ms+0.6666666667*const:2ms")->quantile(0.5) == 0.002);
}

TEST_CASE("mixture errors", "[straggler][mixture]") {
  CHECK(parse_error("mix:0.9*exp:mean=5ms+0.2*const:200ms") ==
        "delay spec 'mix:0.9*exp:mean=5ms+0.2*const:200ms': mixture weights sum to 1.1, not 1; "
        "make them sum to 1, e.g. mix:0.9*exp:mean=5ms+0.1*const:200ms");
  CHECK_THAT(parse_error("mix:0.9*exp:mean=5ms+0.1000001*const:200ms"),
             Contains("sum to 1.0000001, not 1"));
  CHECK_THAT(parse_error("mix:0.9*exp:mean=5ms+const:200ms"),
             Contains("mixture component 'const:200ms' has no weight; write <weight>*<spec>"));
  CHECK_THAT(parse_error("mix:1.1*exp:mean=5ms+-0.1*const:200ms"),
             Contains("mixture weight '-0.1' must be > 0"));
  CHECK_THAT(parse_error("mix:a*exp:mean=5ms"), Contains("mixture weight 'a' is not a number"));
  CHECK_THAT(parse_error("mix:0.5*mix:1*none+0.5*none"),
             Contains("a mixture cannot contain a mixture"));
  CHECK_THAT(parse_error("mix:0.5*trace:delays.csv+0.5*none"),
             Contains("a trace cannot be a mixture component"));
  CHECK_THAT(parse_error("mix:0.5*exp:men=1ms+0.5*none"),
             Contains("unknown parameter 'men' for exp"));
  CHECK_THAT(parse_error("mix:"), Contains("mix needs parameters"));
}
