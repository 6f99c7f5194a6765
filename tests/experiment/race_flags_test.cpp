// `stalesgd race` flags through the CLI: --set, --only, --data-dir, --jobs, and their errors
// in one line.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "support/fixtures.hpp"

using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

// No data_dir in the file: the CLI's --data-dir gives it.
fs::path sweep_file(const TempDir& dir) {
  const auto cfg = dir / "sweep.toml";
  std::ofstream(cfg)
      << "model = \"softmax\"\nworkers = 4\nrule = \"k-async\"\n"
         "delay = \"exp:mean=10ms\"\nclock = \"virtual\"\ntime = \"0.3s\"\n"
         "[[run]]\nlabel = \"K={k}\"\nk = [1, 2]\n"
         "[[run]]\nlabel = \"real\"\nrule = \"async\"\nclock = \"real\"\niterations = 5\n";
  return cfg;
}

// The cells of the --dry-run table's row for `label`.
std::vector<std::string> cells(const std::string& table, const std::string& label) {
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> out;
    std::istringstream row(line);
    for (std::string cell; std::getline(row, cell, '|');) {
      const auto b = cell.find_first_not_of(' ');
      if (b != std::string::npos) out.push_back(cell.substr(b, cell.find_last_not_of(' ') - b + 1));
    }
    if (!out.empty() && out[0] == label) return out;
  }
  return {};
}

}  // namespace

TEST_CASE("race CLI: --set, --only and --data-dir choose and change the runs",
          "[experiment][cli]") {
  TempDir dir;
  const std::string cfg = sweep_file(dir).string();
  const std::string data = repo_data_dir().string();
  auto r = run_cli({"race", "--config", cfg, "--data-dir", data, "--dry-run", "--set", "lr=0.2",
                    "--set=batch=[8,16]", "--only", "K=*", "--only", "real*"});
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(line_count(r.output) == 2 + 6);  // header, rule, (K=1, K=2, real) x 2 batches
  CHECK(cells(r.output, "K=2 (batch=16)") ==
        std::vector<std::string>{"K=2 (batch=16)", "k-2-batch-16", "k-async", "2", "4",
                                 "exp:mean=10ms", "0.2", "16", "1", "virtual"});
  CHECK(cells(r.output, "real (batch=8)").at(9) == "real");
  r = run_cli({"race", "--config", cfg, "--data-dir", data, "--dry-run", "--only", "k-1*"});
  CHECK(r.exit_code == 0);
  CHECK(line_count(r.output) == 3);
  // A bare KEY=VALUE is a --set, and KEY=V1,V2 sweeps as KEY=[V1,V2] does.
  r = run_cli(
      {"race", "--config", cfg, "--data-dir", data, "--dry-run", "lr=0.2,0.3", "--only", "k-1*"});
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(line_count(r.output) == 2 + 2);
  CHECK(cells(r.output, "K=1 (lr=0.3)").at(6) == "0.3");

  // The data is where --data-dir says: a folder without it fails in one line naming it.
  r = run_cli({"race", "--config", cfg, "--data-dir", (dir / "nodata").string(), "--dry-run"});
  CHECK(r.exit_code == 1);
  CHECK(line_count(r.output) == 1);
  CHECK_THAT(r.output, Contains("run 'K=1': " + (dir / "nodata" / "mnist").string()));

  // A race with --jobs 2: the virtual runs go together, the real-clock run after them.
  r = run_cli({"race", "--config", cfg, "--data-dir", data, "--jobs", "2", "--set", "lr=0.07",
               "--out", (dir / "out").string()});
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("--jobs 2: 2 virtual-clock runs go 2 at a time, then 1 "
                                "real-clock run one at a time (side by side they would "
                                "disturb each other's wallclock)"));
  for (const char* f : {"k-1/updates.csv", "k-2/updates.csv", "real/updates.csv", "runs.csv",
                        "experiment.toml", "results.csv"}) {
    CHECK(fs::exists(dir / "out" / f));
  }
  // The copied file records what --set changed.
  CHECK_THAT(slurp(dir / "out" / "experiment.toml"),
             Contains("# race --set, applied over the file above to every run:\n#   --set "
                      "lr=0.07\n"));
}

TEST_CASE("race CLI: a bad --set, --only or --jobs is one line", "[experiment][cli]") {
  TempDir dir;
  const std::string cfg = sweep_file(dir).string();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--set", "wrkers=4"},
       "--set wrkers=4: unknown key 'wrkers' (did you mean 'workers'?); known keys: dataset, "},
      {{"--set", "k=[1,x]"}, "--set k=[1,x]: --k 'x': "},
      {{"--set"}, "--set needs a value"},
      {{"--only", "nothing*"},
       "--only nothing*: no run's label or slug matches; the labels: 'K=1', 'K=2', 'real'"},
      {{"--jobs", "0"}, "--jobs 0 is not a number of runs from 1 to 1024"},
      {{"--out", ""}, "--out '' names no folder; give one, e.g. --out runs/race"},
      // --dry-run checks --out too: here a folder that cannot be made (under a regular file).
      {{"--out", cfg + "/runs"},
       "cannot create --out " + cfg + "/runs: " + cfg + " is not a folder this user can write"},
  };
  for (const auto& [flags, expected] : cases) {
    std::vector<std::string> args{"race", "--config", cfg, "--dry-run"};
    args.insert(args.end(), flags.begin(), flags.end());
    const auto r = run_cli(args);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.output) == 1);
    CHECK_THAT(r.output, Contains(expected));
  }
  const auto help = run_cli({"race", "--help"});
  for (const char* flag : {"--set", "--only", "--data-dir", "--jobs", "--dry-run"}) {
    CHECK_THAT(help.output, Contains(flag));
  }
}
