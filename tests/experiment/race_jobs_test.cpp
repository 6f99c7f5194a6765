// A race's virtual-clock runs several at a time (RaceSettings::jobs) write what one at a time
// writes; a race keeps its file and every run's options (experiment.toml, runs.csv).
#include <algorithm>
#include <atomic>
#include <fstream>
#include <iterator>

#include <catch2/catch.hpp>

#include "stalesgd/experiment/race.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
namespace fs = std::filesystem;

namespace {

std::string bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Four short virtual-clock runs: a K sweep and two learning rates.
fs::path four_runs(const TempDir& dir) {
  const auto cfg = dir / "four.toml";
  std::ofstream(cfg) << "# four runs\nmodel = \"softmax\"\nworkers = 4\nrule = \"k-async\"\n"
                        "delay = \"exp:mean=10ms\"\nclock = \"virtual\"\ntime = \"0.5s\"\n"
                        "eval_every = \"0.1s\"\ndata_dir = \""
                     << repo_data_dir().string()
                     << "\"\n[[run]]\nlabel = \"K={k}\"\nk = [1, 2, 4]\n"
                        "[[run]]\nlabel = \"slow lr\"\nk = 2\nlr = 0.01\n";
  return cfg;
}

}  // namespace

TEST_CASE("race: --jobs 2 writes the files --jobs 1 writes", "[experiment][race][jobs]") {
  TempDir dir;
  auto ex = load_experiment(four_runs(dir));
  REQUIRE(ex.ok());
  REQUIRE(ex->runs.size() == 4);
  for (const auto& r : ex->runs) CHECK(may_run_alongside(r));
  std::vector<std::vector<std::size_t>> done(2);
  for (int jobs : {1, 2}) {
    auto outcome = run_race(
        *ex, dir / ("jobs-" + std::to_string(jobs)), nullptr,
        [&](std::size_t i, const RaceRow&) { done[jobs - 1].push_back(i); },
        RaceSettings{.jobs = jobs});
    REQUIRE(outcome.ok());
    REQUIRE(outcome->rows.size() == 4);
    CHECK(outcome->rows[3].label == "slow lr");
  }
  CHECK(done[0] == std::vector<std::size_t>{0, 1, 2, 3});
  std::sort(done[1].begin(), done[1].end());  // in the order the runs end
  CHECK(done[1] == std::vector<std::size_t>{0, 1, 2, 3});
  const fs::path one = dir / "jobs-1", two = dir / "jobs-2";
  for (const std::string f :
       {"results.csv", "runs.csv", "experiment.toml", "k-1/updates.csv", "k-2/updates.csv",
        "k-4/updates.csv", "slow-lr/updates.csv", "k-4/evals.csv", "slow-lr/gradients.csv"}) {
    INFO(f);
    CHECK(fs::file_size(one / f) > 0);
    CHECK(bytes(one / f) == bytes(two / f));
  }
  // --resume with --jobs 2 keeps every finished run and writes the same results.csv.
  auto again = run_race(*ex, two, nullptr, {}, RaceSettings{.resume = true, .jobs = 2});
  REQUIRE(again.ok());
  CHECK(bytes(one / "results.csv") == bytes(two / "results.csv"));
}

TEST_CASE("race: after a Ctrl-C during --jobs 2 no run starts, and the rows so far are written",
          "[experiment][race][jobs]") {
  TempDir dir;
  auto ex = load_experiment(four_runs(dir));
  REQUIRE(ex.ok());
  std::atomic<bool> interrupt{false};
  std::vector<std::size_t> done;
  // The Ctrl-C comes when the first run ends: the run beside it stops on the flag (or has just
  // ended), and the last two never start.
  auto outcome = run_race(
      *ex, dir / "out", &interrupt,
      [&](std::size_t i, const RaceRow&) {
        done.push_back(i);
        interrupt = true;
      },
      RaceSettings{.jobs = 2});
  REQUIRE(outcome.ok());
  CHECK(outcome->interrupted);
  REQUIRE(outcome->rows.size() >= 1);
  CHECK(outcome->rows.size() <= 2);
  CHECK(done.size() == outcome->rows.size());
  for (std::size_t i : done) CHECK(i < 2);
  CHECK(fs::exists(dir / "out" / "results.csv"));
  CHECK_FALSE(fs::exists(dir / "out" / "k-4"));
  CHECK_FALSE(fs::exists(dir / "out" / "slow-lr"));
  // A Ctrl-C before the race: nothing runs, and the race says it was interrupted.
  auto none = run_race(*ex, dir / "none", &interrupt, {}, RaceSettings{.jobs = 2});
  REQUIRE(none.ok());
  CHECK(none->interrupted);
  CHECK(none->rows.empty());
}

TEST_CASE(
    "race: experiment.toml is the file, runs.csv every run's options, results.csv the "
    "options that matter",
    "[experiment][race]") {
  TempDir dir;
  const auto cfg = four_runs(dir);
  auto ex = load_experiment(cfg);
  REQUIRE(ex.ok());
  REQUIRE(run_race(*ex, dir / "out").ok());
  CHECK(bytes(dir / "out" / "experiment.toml") == bytes(cfg));

  std::ifstream runs(dir / "out" / "runs.csv");
  std::string header, row;
  std::getline(runs, header);
  CHECK_THAT(header, StartsWith("label,slug,dataset,data_dir,model,l2,partition,rule,workers,"));
  CHECK_THAT(header, Contains(",k,batch,lr,lr_rule,delay,delay_mode,"));
  std::getline(runs, row);
  CHECK_THAT(row, StartsWith("K=1,k-1,mnist,"));
  CHECK_THAT(row, Contains(",softmax,0,none,k-async,4,"));
  int rows = 1;
  while (std::getline(runs, row)) ++rows;
  CHECK(rows == 4);

  std::ifstream results(dir / "out" / "results.csv");
  std::getline(results, header);
  // The columns of before, the config that every race shows, then lr, which differs.
  CHECK(header ==
        "label,slug,rule,k,seed,clock,iterations,wall_s,time_to_target_s,final_test_error,"
        "seconds_per_iteration,predicted_seconds_per_iteration,predicted_method,"
        "mean_staleness,p95_staleness,gradients_started,gradients_applied,"
        "gradients_cancelled,wasted_fraction,stop_reason,model,workers,delay,lr,batch,engine");
  std::getline(results, row);
  CHECK_THAT(row, StartsWith("\"K=1\",k-1,k-async,1,1,virtual,"));
  CHECK_THAT(row, Contains(",softmax,4,exp:mean=10ms,0.05,32,thread"));
}
