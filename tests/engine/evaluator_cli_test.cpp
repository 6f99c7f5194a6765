// `stalesgd train` with workers that compute flat out (P = 4, no delay, more workers than
// cores): snapshots are scored while training goes on, the run ends within --time plus its
// reported scoring tail, and --target-error stops the run at the crossing. What is checked is
// what the evaluator guarantees (docs/outputs.md, "Evaluation while training"), not a speed:
// sanitizer builds train the lighter mlp, whose evaluation costs there what lenet's does in a
// release build.
#include <algorithm>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/engine_test_util.hpp"
#include "support/csv_column.hpp"
#include "support/kept_up.hpp"
#include "support/sanitized.hpp"
#include "support/summary.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

namespace {

const char* busy_model() {
  return kSanitized ? "mlp" : "lenet";
}

struct Rows {
  std::vector<double> wall_s, scored_s, test_error;
};

Rows evals(const std::filesystem::path& dir) {
  const auto f = dir / "evals.csv";
  return {csv_column(f, "wall_s"), csv_column(f, "scored_s"), csv_column(f, "test_error")};
}

}  // namespace

TEST_CASE("train CLI: busy workers, rows scored during the run and a short reported tail",
          "[cli][evaluator][keep-up]") {
  TempDir dir;
  const auto r = run_cli({"train", "--model", busy_model(), "--workers", "4", "--rule", "async",
                          "--time", "8s", "--no-progress", "--out", dir.path().string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  check_kept_up(dir.path(), 8.0, r.output);
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
