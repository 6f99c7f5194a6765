// trace:<file.csv>: the file format, its errors (naming file and line), and the empirical
// distribution a trace is as a Distribution. Replay per worker is in delay_sampler_test.cpp.
#include "straggler/trace.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "straggler/straggler_test_util.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

TEST_CASE("trace file: header units, comments, blank lines, CRLF", "[straggler][trace]") {
  TempDir dir;
  write_text(dir / "delays.csv",
             "# recorded on node 3\r\nw0[ms], w1[us] ,w2[s]\r\n\r\n10,2000,0.5\r\n# gap\r\n"
             "20.5,0,1\r\n");
  auto table = straggler::read_trace(dir / "delays.csv");
  REQUIRE(table.ok());
  const auto& t = **table;
  CHECK(t.names == std::vector<std::string>{"w0[ms]", "w1[us]", "w2[s]"});
  CHECK(t.rows() == 2);
  CHECK(t.columns[0] == std::vector<double>{0.01, 0.0205});
  CHECK(t.columns[1] == std::vector<double>{0.002, 0.0});
  CHECK(t.columns[2] == std::vector<double>{0.5, 1.0});
  CHECK(&t.column_for(4) == &t.columns[1]);  // worker 4 of 3 columns replays column 1
}

TEST_CASE("trace as a distribution is the empirical distribution", "[straggler][trace]") {
  TempDir dir;
  write_text(dir / "delays.csv", "a[ms],b[ms]\n1,4\n2,5\n3,6\n");
  const auto d = parse_ok("trace:delays.csv", dir.path());
  CHECK(d->mean() == Approx(0.0035));
  CHECK(d->cdf(0.0025) == Approx(2.0 / 6));
  CHECK(d->cdf(0.006) == 1.0);
  CHECK(d->cdf(0.0009) == 0.0);
  CHECK(d->quantile(0.5) == 0.003);
  CHECK(d->quantile(0.51) == 0.004);
  CHECK(d->quantile(0.0) == 0.001);
  CHECK(d->quantile(1.0) == 0.006);
  CHECK(d->describe() == "trace:delays.csv");
  CHECK_FALSE(d->as_shifted_exponential());
  const Draws draws = draw(*d);
  check_mean(draws, d->mean());
  check_quantiles(draws, *d);
  check_round_trip(*d, dir.path());
  // An absolute path works from any base directory.
  CHECK(parse_ok("trace:" + (dir / "delays.csv").string(), "/nonexistent")->mean() ==
        Approx(0.0035));
}

TEST_CASE("trace file errors name the file and the line", "[straggler][trace]") {
  TempDir dir;
  const std::string base = dir.path().string();
  const auto error_for = [&](const std::string& content) {
    write_text(dir / "t.csv", content);
    return parse_error("trace:t.csv", dir.path());
  };
  CHECK(parse_error("trace:missing.csv", dir.path()) ==
        "delay spec 'trace:missing.csv': trace file '" + base +
            "/missing.csv' does not exist; check the path (a relative path is resolved against "
            "the base directory)");
  CHECK(error_for("w0[ms],w1[ms]\n1,2\n3\n") ==
        "delay spec 'trace:t.csv': trace file '" + base +
            "/t.csv' line 3: 1 values, but the header has 2 columns; give every row one value "
            "per column");
  CHECK_THAT(error_for("w0[ms]\n1\nabc\n"),
             Contains("t.csv' line 3: value 'abc' in column 'w0[ms]' is not a number; write plain "
                      "numbers in the column's unit, e.g. 12.5"));
  CHECK_THAT(error_for("w0[ms]\n1ms\n"),
             Contains("line 2: value '1ms' in column 'w0[ms]' is not a number"));
  CHECK_THAT(error_for("w0[ms]\n-1\n"),
             Contains("line 2: value '-1' in column 'w0[ms]' is negative"));
  // Longer than the clocks hold (it used to wrap into no delay on the real clock).
  CHECK(error_for("w0[s]\n1e9\n1e10\n") ==
        "delay spec 'trace:t.csv': trace file '" + base +
            "/t.csv' line 3: value '1e10' in column 'w0[s]' is longer than 1e+09s (about 31 "
            "years), the longest the run's clocks hold; write a shorter delay");
  CHECK_THAT(error_for("w0[ms]\n\ninf\n"),
             Contains("line 3: value 'inf' in column 'w0[ms]' is not finite"));
  CHECK_THAT(error_for("w0[ms]\n,\n"), Contains("line 2: 2 values, but the header has 1 columns"));
  CHECK_THAT(error_for("w0[ms]\n\n"), Contains("has a header but no rows"));
  CHECK_THAT(error_for("# only a comment\n"),
             Contains("is empty; its first line must be a header such as w0[ms],w1[ms]"));
  CHECK_THAT(error_for(""), Contains("is empty"));
  CHECK_THAT(
      error_for("w0,w1\n1,2\n"),
      Contains("line 1: column 'w0' has no unit; write it as w0[ms] (units: ns, us, ms, s)"));
  CHECK_THAT(error_for("w0[sec]\n1\n"),
             Contains("line 1: column 'w0[sec]' has unknown unit 'sec'"));
  CHECK_THAT(error_for("w0[ms],,w2[ms]\n1,2,3\n"), Contains("line 1: header column 2 is empty"));
  CHECK_THAT(parse_error("trace:.", dir.path()), Contains("is a directory"));
  CHECK_THAT(parse_error("trace:", dir.path()),
             Contains("trace needs parameters; use trace:<file.csv>"));
}

// Found by fuzz/trace_reader.cpp (docs/reliability.md): a header cell keeps control characters
// inside it (trim drops only the ends), and a bad value's message echoed the cell raw, so a
// '\r' in it broke the one-line message.
TEST_CASE("trace file: a header cell's control characters are not echoed raw",
          "[straggler][trace][fuzz]") {
  // The fuzzer's input: header "w0***...\0\a***...[\r\rs]" (unit s), then the row "\r&0\xd8".
  const std::string stars23(23, '*');
  const std::string stars40(40, '*');
  const std::string text =
      "w0" + stars23 + std::string("\0\x07", 2) + stars40 + "[\r\rs]\n\r&0\xd8";
  REQUIRE(text.size() == 77);
  std::istringstream in(text);
  auto table = straggler::read_trace(in, "fuzz.csv");
  REQUIRE_FALSE(table.ok());
  const std::string& message = table.error().message;
  CHECK_THAT(message, Contains("trace file 'fuzz.csv' line 2: value '&0\xd8' in column 'w0" +
                               stars23 + "??" + stars40 + "[??s]' is not a number"));
  CHECK(std::none_of(message.begin(), message.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20; }));
}
