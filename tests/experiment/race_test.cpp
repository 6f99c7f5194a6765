// The race: runs in sequence into subfolders, results.csv and the markdown table.
#include "stalesgd/experiment/race.hpp"

#include <fstream>

#include <catch2/catch.hpp>

#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

TEST_CASE("a virtual-clock race writes every run and the results table", "[experiment][race]") {
  TempDir dir;
  const auto cfg = dir / "race.toml";
  std::ofstream(cfg) << "model = \"softmax\"\nworkers = 4\ndelay = \"exp:mean=10ms\"\n"
                        "clock = \"virtual\"\ntime = \"1s\"\ntarget_error = 0.2\n"
                        "data_dir = \""
                     << repo_data_dir().string()
                     << "\"\n"
                        "[[run]]\nlabel = \"sync\"\nrule = \"sync\"\n"
                        "[[run]]\nlabel = \"async\"\nrule = \"async\"\n";
  auto ex = load_experiment(cfg);
  REQUIRE(ex.ok());
  std::vector<std::size_t> done;
  auto outcome = run_race(*ex, dir / "out", nullptr,
                          [&](std::size_t i, const RaceRow&) { done.push_back(i); });
  REQUIRE(outcome.ok());
  CHECK(done == std::vector<std::size_t>{0, 1});
  REQUIRE(outcome->rows.size() == 2);
  const auto& sync = outcome->rows[0];
  const auto& async = outcome->rows[1];
  CHECK(sync.k == 4);
  CHECK(async.k == 1);
  // Same virtual budget: async makes many more updates and reaches 0.2 first.
  CHECK(async.iterations > 3 * sync.iterations);
  REQUIRE(async.time_to_target_s.has_value());
  CHECK(async.mean_staleness > 1.0);
  CHECK(sync.predicted_method == PredictionMethod::kClosedForm);
  for (const char* f : {"sync/summary.json", "async/gradients.csv", "results.csv"}) {
    CHECK(std::filesystem::exists(dir / "out" / f));
  }
  std::ifstream csv(dir / "out" / "results.csv");
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  CHECK(header.rfind("label,slug,rule,k,seed,clock,iterations,wall_s,time_to_target_s", 0) == 0);
  CHECK(row.rfind("\"sync\",sync,sync,4,1,virtual,", 0) == 0);
  const auto md = results_markdown(outcome->rows, 0.2);
  CHECK_THAT(md, Contains("| async | async | 1 |") && Contains("time to 0.2 (s)"));
}

TEST_CASE("race CLI: a broken config is one line naming file and line", "[experiment][cli]") {
  TempDir dir;
  std::ofstream(dir / "bad.toml") << "time = \"1s\"\n[[run]]\nlabel = \"a\"\nrule = \"k-sync\"\n";
  auto r =
      run_cli({"race", "--config", (dir / "bad.toml").string(), "--out", (dir / "o").string()});
  CHECK(r.exit_code != 0);
  CHECK(line_count(r.output) == 1);
  CHECK_THAT(r.output, Contains("bad.toml:2: run 'a': --rule k-sync needs --k"));
  r = run_cli({"race", "--out", (dir / "o").string()});
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.output, Contains("--config FILE is required"));
}

TEST_CASE("a diverging run is recorded as diverged and the race goes on", "[experiment][race]") {
  TempDir dir;
  const auto cfg = dir / "race.toml";
  std::ofstream(cfg) << "model = \"softmax\"\nworkers = 4\ndelay = \"exp:mean=10ms\"\n"
                        "clock = \"virtual\"\ntime = \"0.5s\"\n"
                        "data_dir = \""
                     << repo_data_dir().string()
                     << "\"\n"
                        "[[run]]\nlabel = \"boom\"\nrule = \"async\"\nlr = 1e38\n"
                        "[[run]]\nlabel = \"after\"\nrule = \"async\"\n";
  auto ex = load_experiment(cfg);
  REQUIRE(ex.ok());
  auto outcome = run_race(*ex, dir / "out");
  REQUIRE(outcome.ok());
  REQUIRE(outcome->rows.size() == 2);
  CHECK(outcome->rows[0].stop_reason == StopReason::kDiverged);
  CHECK_THAT(outcome->rows[0].divergence, Contains("training diverged at iteration"));
  CHECK_FALSE(outcome->rows[0].final_test_error.has_value());
  CHECK(outcome->rows[1].stop_reason == StopReason::kTime);
  CHECK(outcome->rows[1].final_test_error.has_value());
  CHECK_THAT(results_markdown(outcome->rows, 0.0), Contains("| boom | async | 1 | — | diverged |"));
}

TEST_CASE("results.csv is replaced whole or not at all", "[experiment][race]") {
  TempDir dir;
  RaceRow row;
  row.label = "a, \"quoted\" label";
  row.slug = "a";
  REQUIRE(write_results_csv(dir / "results.csv", {row}).ok());
  const auto first = read_bytes(dir / "results.csv");
  CHECK_THAT(std::string(first.begin(), first.end()), Contains("\"a, \"\"quoted\"\" label\",a,"));
  // A folder where results.csv should go: the rename fails, the error is one line.
  write_bytes(dir / "out" / "results.csv" / "x", {'x'});
  const Status s = write_results_csv(dir / "out" / "results.csv", {row});
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.error().message,
             Contains("cannot rename " + (dir / "out").string() + "/results.csv.tmp.") &&
                 Contains("; check that --out is writable and has room"));
  CHECK(s.error().message.find('\n') == std::string::npos);
  CHECK(std::distance(std::filesystem::directory_iterator(dir / "out"),
                      std::filesystem::directory_iterator()) == 1);
}
