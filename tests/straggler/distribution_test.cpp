// parse_distribution as a whole: the registry, spec-level errors, canonical round trips and
// seeded determinism of every family.
#include <catch2/catch.hpp>

#include <fstream>
#include <limits>

#include "straggler/straggler_test_util.hpp"
#include "support/delay_families.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

namespace {
// One spec per family (and the lognormal's two parameterisations).
const char* const kOnePerFamily[] = {
    "none",
    "const:10ms",
    "uniform:5ms..15ms",
    "exp:mean=20ms",
    "shifted-exp:shift=5ms,mean=10ms",
    "pareto:scale=5ms,shape=1.5",
    "lognormal:median=10ms,sigma=0.5",
    "lognormal:mean=10ms,sigma=0.5",
    "mix:0.9*exp:mean=5ms+0.1*const:200ms",
    "trace:delays.csv",
};
}  // namespace

TEST_CASE("every family parses, describes itself canonically and round-trips",
          "[straggler][distribution]") {
  TempDir dir;
  std::ofstream(dir / "delays.csv") << "w0[ms],w1[ms]\n1,2\n3,4\n";
  for (const char* spec : kOnePerFamily) {
    INFO(spec);
    const auto d = parse_ok(spec, dir.path());
    CHECK(d->describe() == spec);  // these are written canonically already
    check_round_trip(*d, dir.path());
  }
}

TEST_CASE("the same seed gives the same draws, bit for bit", "[straggler][distribution]") {
  TempDir dir;
  std::ofstream(dir / "delays.csv") << "w0[ms],w1[ms]\n1,2\n3,4\n";
  for (const char* spec : kOnePerFamily) {
    INFO(spec);
    const auto d = parse_ok(spec, dir.path());
    Rng a(42), b(42), c(43);
    bool differs = false;
    for (int i = 0; i < 1000; ++i) {
      const double x = d->sample(a);
      REQUIRE(x == d->sample(b));
      REQUIRE(x >= 0);
      differs = differs || x != d->sample(c);
    }
    // Another seed gives another sequence, except for families without randomness.
    const std::string family = std::string(spec).substr(0, 5);
    if (family != "none" && family != "const") CHECK(differs);
  }
}

TEST_CASE("spec-level errors", "[straggler][distribution]") {
  CHECK(parse_error("expo:mean=10ms") ==
        test::with_registered_families(
            "delay spec 'expo:mean=10ms': unknown distribution 'expo'; use one of none, const, "
            "uniform, exp, shifted-exp, pareto, lognormal, mix, trace, e.g. exp:mean=20ms"));
  CHECK(parse_error("") ==
        "delay spec is empty; write a distribution, e.g. exp:mean=20ms, or none for no delay");
  CHECK(parse_error("   ") == parse_error(""));
  CHECK_THAT(parse_error("exp:mean=10ms\nconst:1ms"),
             Contains("'exp:mean=10ms?const:1ms'"));  // one line
  CHECK_THAT(parse_error(":10ms"), Contains("unknown distribution ''"));
}

TEST_CASE("quantile accepts any double without crashing", "[straggler][distribution]") {
  TempDir dir;
  std::ofstream(dir / "delays.csv") << "w0[ms]\n1\n";
  for (const char* spec : kOnePerFamily) {
    INFO(spec);
    const auto d = parse_ok(spec, dir.path());
    CHECK(d->quantile(-1.0) == d->quantile(0.0));
    CHECK(d->quantile(2.0) == d->quantile(1.0));
    CHECK(d->cdf(-1.0) == 0.0);
    CHECK(d->cdf(std::numeric_limits<double>::infinity()) == 1.0);
  }
}
