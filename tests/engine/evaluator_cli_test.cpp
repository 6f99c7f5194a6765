// `stalesgd train` with workers that compute flat out (P = 4, no delay, more workers than
// cores): snapshots are scored while training goes on, the run ends within --time plus its
// reported scoring tail, and --target-error stops the run at the crossing. What is checked is
// what the evaluator guarantees (docs/outputs.md, "Evaluation while training"), not a speed:
// sanitizer builds train the lighter mlp, whose evaluation costs there what lenet's does in a
// release build.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/engine_test_util.hpp"
#include "support/csv_column.hpp"
#include "support/sanitized.hpp"
#include "support/summary.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

namespace {

const char* busy_model() {
  return kSanitized ? "mlp" : "lenet";
}

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

struct Rows {
  std::vector<double> wall_s, scored_s, test_error, test_samples, train_samples;
};

Rows evals(const std::filesystem::path& dir) {
  const auto f = dir / "evals.csv";
  return {csv_column(f, "wall_s"), csv_column(f, "scored_s"), csv_column(f, "test_error"),
          csv_column(f, "test_samples"), csv_column(f, "train_samples")};
}

}  // namespace

TEST_CASE("train CLI: busy workers, rows scored during the run and a short reported tail",
          "[cli][evaluator][keep-up]") {
  TempDir dir;
  const auto r = run_cli({"train", "--model", busy_model(), "--workers", "4", "--rule", "async",
                          "--time", "8s", "--no-progress", "--out", dir.path().string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto s = read_summary(dir.path());
  const double wall = s["wall_s"].get<double>(), tail = s["scoring_tail_s"].get<double>();
  const Rows rows = evals(dir.path());
  REQUIRE(rows.scored_s.size() == rows.wall_s.size());
  REQUIRE(rows.wall_s.size() >= 2);
  // Every row scored after its snapshot was taken, and at least four while training went on
  // (at idle priority the run would score none before its end).
  std::size_t during = 0, after = 0;
  for (std::size_t i = 0; i < rows.wall_s.size(); ++i) {
    CHECK(rows.scored_s[i] >= rows.wall_s[i]);
    (rows.scored_s[i] < wall ? during : after) += 1;
  }
  CHECK(during >= 4);
  // The tail: the final snapshot and a backlog of at most two (sized, the backlog holds two).
  CHECK(after >= 1);
  CHECK(after <= 3);
  CHECK(*std::max_element(rows.scored_s.begin(), rows.scored_s.end()) <= wall + tail + 1e-6);
  // The final row on all the samples asked for: the whole test split and 10,000 train samples.
  CHECK(rows.test_samples.back() == 10000);
  CHECK(rows.train_samples.back() == 10000);
  CHECK(s["final_test_error"].get<double>() == Approx(rows.test_error.back()).margin(1e-6));
  // The clock: training is --time (to the next check of the budget), then the tail; from the
  // clock's start to the end the run took those two and its bookkeeping (1 s: a bound on
  // moving the records, not on scoring).
  CHECK(wall == Approx(8.0).margin(0.5));
  const auto& p = s["provenance"];
  const double clocked = utc_seconds(p["ended_at"]) - utc_seconds(p["clock_started_at"]);
  CHECK(clocked <= 8.0 + tail + 1.0);
  CHECK(utc_seconds(p["clock_started_at"]) >= utc_seconds(p["started_at"]));
  // The printed lines and run.log say it too.
  CHECK(r.output.find("scoring tail") != std::string::npos);
  std::ifstream log(dir / "run.log");
  const std::string text((std::istreambuf_iterator<char>(log)), {});
  CHECK(text.find("scoring tail") != std::string::npos);
}

TEST_CASE("train CLI: busy workers, --target-error stops at the first row scored under it",
          "[cli][evaluator][keep-up]") {
  TempDir dir;
  const double target = kSanitized ? 0.15 : 0.06;
  const auto r = run_cli({"train", "--model", busy_model(), "--workers", "4", "--rule", "async",
                          "--time", "300s", "--target-error", std::to_string(target),
                          "--no-progress", "--out", dir.path().string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto s = read_summary(dir.path());
  REQUIRE(s["stop_reason"] == "target-error");
  const Rows rows = evals(dir.path());
  const auto first = std::find_if(rows.test_error.begin(), rows.test_error.end(),
                                  [&](double e) { return e <= target; });
  REQUIRE(first != rows.test_error.end());
  const auto i = static_cast<std::size_t>(first - rows.test_error.begin());
  CHECK(s["time_to_target_s"].get<double>() == Approx(rows.wall_s[i]).margin(1e-6));
  // The first row scored under the target (the idle thread may finish a later snapshot before
  // the catch-up thread an earlier one) was seen while training went on, and the run stopped
  // at the supervisor's next look (it polls every 100 ms; 1 s of margin), long before the
  // 300 s budget.
  double seen = std::numeric_limits<double>::infinity();
  for (std::size_t j = 0; j < rows.wall_s.size(); ++j) {
    if (rows.test_error[j] <= target) seen = std::min(seen, rows.scored_s[j]);
  }
  const double wall = s["wall_s"].get<double>();
  CHECK(seen <= wall);
  CHECK(wall <= seen + 1.0);
  // After the crossing: at most the backlog of two, a snapshot taken before the stop, and the
  // final one.
  CHECK(rows.wall_s.size() - i <= 1 + 4);
}
