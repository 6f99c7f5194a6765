// check_kept_up: the evaluator's guarantees read back from a run's evals.csv and summary.json.
#include "support/kept_up.hpp"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>

#include <catch2/catch.hpp>

#include "support/csv_column.hpp"
#include "support/summary.hpp"

namespace stalesgd::test {
namespace {

// Seconds since the epoch of provenance's "2026-12-03T14:19:41.101Z".
double utc_seconds(const std::string& iso) {
  std::tm tm{};
  int ms = 0;
  REQUIRE(std::sscanf(iso.c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                      &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) == 7);
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(timegm(&tm)) + ms / 1000.0;
}

}  // namespace

void check_kept_up(const std::filesystem::path& out, double budget_s, const std::string& output) {
  const auto s = read_summary(out);
  const double wall = s["wall_s"].get<double>(), tail = s["scoring_tail_s"].get<double>();
  const auto f = out / "evals.csv";
  const auto wall_s = csv_column(f, "wall_s"), scored_s = csv_column(f, "scored_s");
  const auto test_error = csv_column(f, "test_error"), test_samples = csv_column(f, "test_samples");
  const auto train_samples = csv_column(f, "train_samples");
  REQUIRE(scored_s.size() == wall_s.size());
  REQUIRE(wall_s.size() >= 2);
  // Every row scored after its snapshot was taken, and at least four while training went on
  // (at idle priority the run would score none before its end).
  std::size_t during = 0, after = 0;
  for (std::size_t i = 0; i < wall_s.size(); ++i) {
    CHECK(scored_s[i] >= wall_s[i]);
    (scored_s[i] < wall ? during : after) += 1;
  }
  CHECK(during >= 4);
  // The tail: the final snapshot and a backlog of at most two (sized, the backlog holds two).
  CHECK(after >= 1);
  CHECK(after <= 3);
  CHECK(*std::max_element(scored_s.begin(), scored_s.end()) <= wall + tail + 1e-6);
  // The final row on all the samples asked for: MNIST's whole test split and 10,000 train
  // samples.
  CHECK(test_samples.back() == 10000);
  CHECK(train_samples.back() == 10000);
  CHECK(s["final_test_error"].get<double>() == Approx(test_error.back()).margin(1e-6));
  // The clock: training is --time (to the next check of the budget), then the tail; from the
  // clock's start to the end the run took those two and its bookkeeping (1 s: a bound on
  // moving the records, not on scoring).
  CHECK(wall == Approx(budget_s).margin(0.5));
  const auto& p = s["provenance"];
  const double clocked = utc_seconds(p["ended_at"]) - utc_seconds(p["clock_started_at"]);
  CHECK(clocked <= budget_s + tail + 1.0);
  CHECK(utc_seconds(p["clock_started_at"]) >= utc_seconds(p["started_at"]));
  // The printed lines and run.log say it too.
  CHECK(output.find("scoring tail") != std::string::npos);
  std::ifstream log(out / "run.log");
  const std::string text((std::istreambuf_iterator<char>(log)), {});
  CHECK(text.find("scoring tail") != std::string::npos);
}

}  // namespace stalesgd::test
