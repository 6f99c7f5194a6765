// Times with a unit: parse_duration and format_duration.
#include "stalesgd/straggler/duration.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "stalesgd/util/seed.hpp"

using namespace stalesgd;
using Catch::Matchers::Contains;

TEST_CASE("parse_duration reads the four units", "[straggler][duration]") {
  CHECK(*parse_duration("10ms") == 0.01);
  CHECK(*parse_duration("1.5s") == 1.5);
  CHECK(*parse_duration("250us") == 250e-6);
  CHECK(*parse_duration("7ns") == 7e-9);
  CHECK(*parse_duration(" 2 ms ") == 0.002);
  CHECK(*parse_duration("1e3ms") == 1.0);
  CHECK(*parse_duration("0s") == 0.0);
  CHECK_FALSE(std::signbit(*parse_duration("-0ms")));
}

TEST_CASE("parse_duration reads minutes, hours and compound times", "[straggler][duration]") {
  CHECK(*parse_duration("2m") == 120.0);
  CHECK(*parse_duration("1.5h") == 5400.0);
  CHECK(*parse_duration("1h30m") == 5400.0);
  CHECK(*parse_duration("1h 30m 15s") == 5415.0);
  CHECK(*parse_duration("2m30s") == 150.0);
  CHECK(*parse_duration("1s500ms") == 1.5);
  CHECK(*parse_duration("30ms") == 0.03);  // not 30 minutes and an s
  CHECK_THAT(parse_duration("30m1h").error().message, Contains("write the largest first"));
  CHECK_THAT(parse_duration("1m1m").error().message, Contains("repeats a unit"));
  CHECK_THAT(parse_duration("1h30").error().message, Contains("time '1h30' has no unit"));
  CHECK_THAT(parse_duration("1h-5m").error().message, Contains("is negative"));
  // Written back in the four units, so recorded command lines read as before.
  CHECK(format_duration(*parse_duration("1h30m")) == "5400s");
}

TEST_CASE("parse_duration errors name the fix", "[straggler][duration]") {
  CHECK(parse_duration("10").error().message ==
        "time '10' has no unit; write 10ms or 10s (units: ns, us, ms, s, m, h)");
  CHECK(parse_duration("10sec").error().message ==
        "time '10sec' has unknown unit 'sec'; use ns, us, ms, s, m or h, e.g. 10ms");
  CHECK_THAT(parse_duration("").error().message, Contains("missing time"));
  CHECK_THAT(parse_duration("ms").error().message, Contains("is not a number with a unit"));
  CHECK_THAT(parse_duration("-3ms").error().message, Contains("is negative"));
  CHECK_THAT(parse_duration("infs").error().message, Contains("is not finite"));
  CHECK_THAT(parse_duration("1e400s").error().message, Contains("is out of range"));
  // Past what a nanosecond clock plus a start time holds: refused, not wrapped around.
  CHECK_THAT(parse_duration("1e10s").error().message, Contains("is longer than 1e+09s"));
  CHECK(parse_duration("1e9s").value() == 1e9);
  CHECK_THAT(parse_duration("1.2.3ms").error().message, Contains("unknown unit '.3ms'"));
  CHECK_THAT(parse_duration("10\tsec").error().message, Contains("time '10?sec'"));  // one line
}

TEST_CASE("format_duration picks the natural unit when exact", "[straggler][duration]") {
  CHECK(format_duration(0.01) == "10ms");
  CHECK(format_duration(0.5) == "500ms");
  CHECK(format_duration(1.5) == "1.5s");
  CHECK(format_duration(1234.5) == "1234.5s");
  CHECK(format_duration(30) == "30s");
  CHECK(format_duration(0.0015) == "1.5ms");
  CHECK(format_duration(2e-7) == "200ns");
  CHECK(format_duration(0) == "0s");
  CHECK(format_duration(1e-5) == "10us");
}

TEST_CASE("format_duration round-trips exactly", "[straggler][duration]") {
  Rng rng(5);
  std::uniform_real_distribution<double> exponent(-9, 4);
  for (int i = 0; i < 20000; ++i) {
    const double x = std::pow(10.0, exponent(rng)) * (1 + static_cast<double>(rng() % 1000) / 7);
    const auto back = parse_duration(format_duration(x));
    REQUIRE(back.ok());
    REQUIRE(*back == x);
  }
}
