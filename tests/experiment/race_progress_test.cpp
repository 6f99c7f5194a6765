// A race's ETA: the running run's own, plus the runs to come at the mean length of those that
// ended (before any ended, at the running runs' projected length), shared among the jobs.
#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "experiment/race_progress.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd;

namespace {
Experiment four_runs() {
  Experiment ex;
  for (const char* label : {"a", "b", "c", "d"}) {
    TrainerOptions o;
    o.iterations = 10;
    auto r = ResolvedRun::resolve(o);
    REQUIRE(r);
    ex.runs.push_back({label, label, std::move(r).value()});
  }
  return ex;
}

ProgressSample at(double wall_s, double budget) {
  ProgressSample s;
  s.wall_s = s.t_s = wall_s;
  s.budget = budget;
  return s;
}
}  // namespace

TEST_CASE("race ETA: the run's own and the runs to come", "[race][progress]") {
  RaceProgress p(four_runs(), /*to_stderr=*/false, 10.0, /*jobs=*/1);
  auto first = p.start(0, nullptr);
  // No estimate before 1% of the first run.
  CHECK(p.eta_text(0, at(0.1, 0.001)).empty());
  // 10 s for half of run a: 10 s more, and 20 s for each of b, c, d.
  CHECK(p.eta_text(0, at(10.0, 0.5)) == "race ETA 1:10");
  p.finished(0, 18.0);
  auto second = p.start(1, nullptr);
  // Run b: 5 s for a quarter, 15 s more; c and d at a's 18 s.
  CHECK(p.eta_text(1, at(5.0, 0.25)) == "race ETA 0:51");
}

TEST_CASE("race ETA with jobs: runs side by side share the time left", "[race][progress]") {
  RaceProgress p(four_runs(), false, 10.0, /*jobs=*/2);
  auto a = p.start(0, nullptr);
  auto b = p.start(1, nullptr);
  CHECK(p.eta_text(0, at(4.0, 0.5)) == "race ETA 0:14");  // (4 + 8 + 8 + 8) / 2
  // b: 12 s more; c and d at the mean projected length of a and b, (8 + 16) / 2.
  CHECK(p.eta_text(1, at(4.0, 0.25)) == "race ETA 0:20");  // (4 + 12 + 12 + 12) / 2
}

TEST_CASE("race CLI off a terminal: progress lines with the run's place and the race's ETA",
          "[race][progress][cli]") {
  test::TempDir dir;
  {
    std::ofstream toml(dir / "race.toml");
    toml << "model = \"softmax\"\nworkers = 2\ndelay = \"exp:mean=5ms\"\ntime = \"1.5s\"\n"
            "eval_samples = 500\n[[run]]\nlabel = \"async\"\nrule = \"async\"\n"
            "[[run]]\nlabel = \"sync\"\nrule = \"sync\"\n";
  }
  const auto out = dir / "out";
  const auto r = test::run_shell(std::string(STALESGD_CLI) + " race --config " +
                                 (dir / "race.toml").string() + " --progress-every 0.5s --out " +
                                 out.string() + " 2>" + (dir / "stderr.txt").string());
  REQUIRE(r.exit_code == 0);
  std::ifstream err(dir / "stderr.txt");
  std::vector<std::string> progress;
  for (std::string l; std::getline(err, l);) {
    if (l.find("info: progress ") != std::string::npos) progress.push_back(l);
  }
  INFO(r.output);
  REQUIRE(progress.size() >= 2);
  CHECK(progress.front().find("progress [1/2] async  ") != std::string::npos);
  CHECK(progress.back().find("progress [2/2] sync  ") != std::string::npos);
  CHECK(progress.back().find("race ETA ") != std::string::npos);
  // Each run's run.log and summary.json's provenance name the race's command line.
  for (const char* run : {"async", "sync"}) {
    std::ifstream log(out / run / "run.log");
    std::string first;
    std::getline(log, first);
    CHECK(first.find(std::string("start: run '") + run + "' of: ") != std::string::npos);
    std::ifstream summary(out / run / "summary.json");
    const auto s = nlohmann::json::parse(summary);
    CHECK(s["provenance"]["command_line"].get<std::string>().find(" race --config ") !=
          std::string::npos);
  }
}
