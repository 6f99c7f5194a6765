// exp:mean=<time>: the paper's exponential delays, cdf 1 - exp(-x/m), quantile -m log(1 - p).
#include <catch2/catch.hpp>

#include <cmath>

#include "straggler/straggler_test_util.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

TEST_CASE("exp matches its mean, quantiles and cdf", "[straggler][exponential]") {
  const auto d = parse_ok("exp:mean=20ms");
  CHECK(d->mean() == 0.02);
  for (const double p : {0.1, 0.5, 0.9, 0.99}) {
    CHECK(d->quantile(p) == Approx(-0.02 * std::log(1 - p)).epsilon(1e-14));
  }
  CHECK(d->cdf(0.02) == Approx(1 - std::exp(-1.0)).epsilon(1e-14));
  CHECK(d->cdf(-1.0) == 0.0);
  CHECK(d->quantile(0.0) == 0.0);
  CHECK(std::isinf(d->quantile(1.0)));
  const Draws draws = draw(*d);
  check_mean(draws, 0.02);
  check_quantiles(draws, *d);
  check_cdf_inverts_quantile(*d);
  CHECK(draws.sorted.front() > 0);
}

TEST_CASE("exp exposes shift 0 for the theory's closed forms", "[straggler][exponential]") {
  const auto params = parse_ok("exp:mean=20ms")->as_shifted_exponential();
  REQUIRE(params);
  CHECK(params->shift_s == 0.0);
  CHECK(params->mean_s == 0.02);
}

TEST_CASE("exp describes itself canonically", "[straggler][exponential]") {
  CHECK(parse_ok("exp:mean=20ms")->describe() == "exp:mean=20ms");
  CHECK(parse_ok("exp: mean = 0.02s")->describe() == "exp:mean=20ms");
  CHECK(parse_ok("exp:mean=1500us")->describe() == "exp:mean=1.5ms");
  check_round_trip(*parse_ok("exp:mean=12.345678ms"));
}

TEST_CASE("exp errors", "[straggler][exponential]") {
  CHECK(parse_error("exp:men=10ms") ==
        "delay spec 'exp:men=10ms': unknown parameter 'men' for exp; use exp:mean=<time>, "
        "e.g. exp:mean=20ms");
  CHECK(parse_error("exp:mean=0ms") ==
        "delay spec 'exp:mean=0ms': exp mean must be > 0, got '0ms'; use exp:mean=<time>, "
        "e.g. exp:mean=20ms");
  CHECK_THAT(parse_error("exp:mean=10"), Contains("exp mean: time '10' has no unit; write 10ms"));
  CHECK_THAT(parse_error("exp:mean=10sec"),
             Contains("unknown unit 'sec'; use ns, us, ms, s, m or h"));
  CHECK_THAT(parse_error("exp:mean=infms"), Contains("time 'infms' is not finite"));
  CHECK_THAT(parse_error("exp:mean=nanms"), Contains("time 'nanms' is not finite"));
  CHECK_THAT(parse_error("exp:mean=1e999ms"), Contains("time '1e999ms' is out of range"));
  CHECK_THAT(parse_error("exp:mean=abc"), Contains("time 'abc' is not a number with a unit"));
  CHECK_THAT(parse_error("exp:mean=10ms,mean=20ms"),
             Contains("parameter 'mean' of exp is given twice"));
  CHECK_THAT(parse_error("exp:10ms"), Contains("exp parameter '10ms' is not key=value"));
  CHECK_THAT(parse_error("exp:rate=5"), Contains("unknown parameter 'rate' for exp"));
  CHECK_THAT(parse_error("exp"), Contains("exp needs parameters; use exp:mean=<time>"));
}
