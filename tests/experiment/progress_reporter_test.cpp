// The progress text: % of the budget, rate, ETA, error and staleness, and log lines at whole
// periods of --progress-every in run.log.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "experiment/progress_reporter.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

TEST_CASE("progress text: budget, rate, ETA, error, staleness", "[progress]") {
  ProgressSample s;
  s.t_s = 3.0;
  s.wall_s = 3.0;
  s.iteration = 600;
  s.budget = 0.25;
  s.test_error = 0.1234;
  s.mean_staleness = 1.5;
  CHECK(ProgressReporter::describe(s) ==
        "25%  t 3.0 s  iteration 600  200 it/s  ETA 0:09  test error 0.1234  staleness 1.50");
  // Only a target error bounds the run: no percentage, no ETA.
  s.budget.reset();
  s.test_error.reset();
  CHECK(ProgressReporter::describe(s) ==
        "t 3.0 s  iteration 600  200 it/s  ETA -  test error -  staleness 1.50");
  CHECK(ProgressReporter::clock_text(7.4) == "0:07");
  CHECK(ProgressReporter::clock_text(754) == "12:34");
  CHECK(ProgressReporter::clock_text(10930) == "3:02:10");
}

TEST_CASE("ETA: from the wall time per fraction of the budget, none below 1%", "[progress]") {
  ProgressSample s;
  s.wall_s = 10.0;
  s.budget = 0.005;
  CHECK_FALSE(ProgressReporter::eta_s(s));
  s.budget = 0.4;  // 10 s for 40%: 15 s for the other 60%
  CHECK(*ProgressReporter::eta_s(s) == Approx(15.0));
}

TEST_CASE("run.log gets a progress line at each whole period, with the race's context",
          "[progress]") {
  TempDir dir;
  logging::set_stderr_level(spdlog::level::off);
  {
    auto log = logging::RunLog::open(dir.path());
    REQUIRE(log);
    ProgressReporter p(/*to_stderr=*/false, /*every_s=*/2.0, log->get());
    p.set_context("[2/3] k-async", [](const ProgressSample&) { return "race ETA 1:00"; });
    ProgressSample s;
    for (double wall : {0.5, 1.9, 2.1, 2.5, 3.9, 6.7, 6.9}) {
      s.wall_s = s.t_s = wall;
      p.update(s);
    }
    p.done();
  }
  std::ifstream in(dir / "run.log");
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l.substr(l.find(" info ") + 6));
  CHECK(lines == std::vector<std::string>{
                     "progress [2/3] k-async  t 2.1 s  iteration 0  0 it/s  ETA -  test error -  "
                     "staleness 0.00  race ETA 1:00",
                     "progress [2/3] k-async  t 6.7 s  iteration 0  0 it/s  ETA -  test error -  "
                     "staleness 0.00  race ETA 1:00"});
  logging::set_stderr_level(spdlog::level::info);
}
