// The race: runs in sequence into subfolders, results.csv and the markdown table.
#include "stalesgd/experiment/race.hpp"

#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include "support/fixtures.hpp"
#include "support/sanitized.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

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
  // A run that did not finish gets a stop column, so that it is not read as finished.
  const auto md = results_markdown(outcome->rows, 0.0);
  CHECK_THAT(md, Contains("| boom | async | 1 | — | diverged |"));
  CHECK_THAT(md, Contains("wasted work | stop |"));
  CHECK_THAT(md, Contains("% | diverged |\n"));
  CHECK_THAT(md, Contains("% | time |\n"));
  // A race whose runs all finished keeps the narrower table.
  CHECK_THAT(results_markdown({outcome->rows[1]}, 0.0), !Contains("stop |"));
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

namespace {

// A race of a good virtual-clock run and then `second` (TOML lines of a [[run]] table).
std::filesystem::path two_run_race(const TempDir& dir, const std::string& second) {
  const auto cfg = dir / "race.toml";
  std::ofstream(cfg) << "model = \"softmax\"\nworkers = 2\ndelay = \"exp:mean=1ms\"\n"
                        "clock = \"virtual\"\ntime = \"0.2s\"\ndata_dir = \""
                     << repo_data_dir().string()
                     << "\"\n[[run]]\nlabel = \"good\"\nrule = \"async\"\n"
                        "[[run]]\nlabel = \"second\"\nrule = \"async\"\n"
                     << second;
  return cfg;
}

}  // namespace

TEST_CASE("race: every run's data set and model are checked before the first run",
          "[experiment][race]") {
  TempDir dir;
  TempDir empty;
  const std::vector<std::pair<std::string, std::string>> cases{
      {"model = \"cifar-cnn\"\n",
       "run 'second': model 'cifar-cnn' needs 3x32x32 images, not 1x28x28; use --dataset cifar10 "
       "(for mnist or fashion-mnist use --model lenet)"},
      {"model = \"lenet\"\ndataset = \"fashion-mnist\"\ndata_dir = \"" + empty.path().string() +
           "\"\n",
       "run 'second': " + (empty / "fashion-mnist" / "train-images-idx3-ubyte").string() +
           ": file not found; run `stalesgd data fetch fashion-mnist --data-dir " +
           empty.path().string() + "`"},
      {"batch = 65536\n",
       "run 'second': batch = 65536 is larger than the 60000 training samples of mnist; give a "
       "smaller batch"},
  };
  for (const auto& [second, expected] : cases) {
    INFO(second);
    auto ex = load_experiment(two_run_race(dir, second));
    REQUIRE(ex.ok());
    const auto check = check_race(*ex);
    REQUIRE_FALSE(check.ok());
    CHECK(check.error().message == expected);
    // The race stops before it creates or trains anything.
    std::vector<std::size_t> done;
    auto outcome = run_race(*ex, dir / "out", nullptr,
                            [&](std::size_t i, const RaceRow&) { done.push_back(i); });
    REQUIRE_FALSE(outcome.ok());
    CHECK(outcome.error().message == expected);
    CHECK(done.empty());
    CHECK_FALSE(std::filesystem::exists(dir / "out"));
    // The CLI says so in one line, with --dry-run too.
    for (const bool dry : {false, true}) {
      std::vector<std::string> args{"race", "--config", (dir / "race.toml").string(), "--out",
                                    (dir / "out").string()};
      if (dry) args.push_back("--dry-run");
      const auto r = run_cli(args);
      CHECK(r.exit_code == 1);
      CHECK(r.output == "stalesgd: error: " + expected + "\n");
      CHECK_FALSE(std::filesystem::exists(dir / "out"));
    }
  }
  // The good race passes, and --dry-run lists it.
  auto ex = load_experiment(two_run_race(dir, ""));
  REQUIRE(ex.ok());
  const auto data = check_race(*ex);
  REQUIRE(data.ok());
  CHECK(data->size() == 1);  // mnist, loaded once for both runs
  const auto r = run_cli({"race", "--config", (dir / "race.toml").string(), "--dry-run"});
  CHECK(r.exit_code == 0);
  CHECK(r.output ==
        "| label  | folder | rule  | K | P | delay        | lr   | batch | seed | clock   |\n"
        "|--------|--------|-------|---|---|--------------|------|-------|------|---------|\n"
        "| good   | good   | async | 1 | 2 | exp:mean=1ms | 0.05 | 32    | 1    | virtual |\n"
        "| second | second | async | 1 | 2 | exp:mean=1ms | 0.05 | 32    | 1    | virtual |\n");
}

TEST_CASE("race: an mpi run's model is checked against the catalog's shape", "[experiment][race]") {
  TempDir dir;
  auto ex = load_experiment(two_run_race(
      dir, "engine = \"mpi\"\nclock = \"real\"\nmodel = \"lenet\"\ndataset = \"cifar10\"\n"));
  REQUIRE(ex.ok());
  const auto check = check_race(*ex);
  REQUIRE_FALSE(check.ok());
  // Without MPI the build refuses the run first; with it, the model does not fit CIFAR-10.
  CHECK_THAT(check.error().message,
             Contains("run 'second': model 'lenet' needs 1x28x28 images, not 3x32x32") ||
                 Contains("run 'second': engine = \"mpi\" needs Open MPI"));
}

TEST_CASE("race CLI: an --out that holds files is refused unless --force", "[experiment][cli]") {
  TempDir dir;
  const auto cfg = two_run_race(dir, "");
  const std::string out = (dir / "out").string();
  write_bytes(dir / "out" / "good" / "summary.json", {'{', '}'});
  auto r = run_cli({"race", "--config", cfg.string(), "--out", out});
  CHECK(r.exit_code == 2);
  CHECK(r.output == "stalesgd: error: --out " + out +
                        " already holds files, which this race's runs would mix with; give a new "
                        "folder, or add --force to write into it (files of the same names are "
                        "replaced), or --resume to finish the race that is there\n");
  r = run_cli({"race", "--config", cfg.string(), "--out", out, "--dry-run"});
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.output) == 1);
  // --force writes into it; the run folder of the same name gets this race's files.
  r = run_cli({"race", "--config", cfg.string(), "--out", out, "--force"});
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(std::filesystem::file_size(dir / "out" / "good" / "summary.json") > 2);
  CHECK(std::filesystem::exists(dir / "out" / "second" / "updates.csv"));
  CHECK(std::filesystem::exists(dir / "out" / "results.csv"));
  // An --out that is a file.
  r = run_cli({"race", "--config", cfg.string(), "--out", (dir / "race.toml").string()});
  CHECK(r.exit_code == 2);
  CHECK(r.output == "stalesgd: error: --out " + (dir / "race.toml").string() +
                        " is a file, not a folder; give a folder for the race's runs\n");
  // An empty folder is fine.
  std::filesystem::create_directories(dir / "empty");
  CHECK(check_race_out(dir / "empty", ExistingOut::kRefuse).ok());
  CHECK(check_race_out(dir / "new", ExistingOut::kRefuse).ok());
  CHECK(check_race_out(dir / "out", ExistingOut::kOverwrite).ok());
}

namespace {

// Every file under `dir` with its bytes, but the lock file.
std::map<std::string, std::string> race_files(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    // The lock file holds the pid of the last process that owned the folder.
    if (!e.is_regular_file() || e.path().filename() == ".stalesgd.lock") continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    files[fs::relative(e.path(), dir).string()] = s.str();
  }
  return files;
}

double summary_lr(const fs::path& run) {
  std::ifstream in(run / "summary.json");
  return nlohmann::json::parse(in)["config"]["lr"].get<double>();
}

}  // namespace

TEST_CASE("race CLI: --resume keeps only runs the experiment file still describes",
          "[experiment][cli][resume]") {
  TempDir dir;
  const auto cfg = two_run_race(dir, "");
  const fs::path out = dir / "out";
  const std::string cli = std::string(STALESGD_CLI);
  REQUIRE(run_cli({"race", "--config", cfg.string(), "--checkpoint-every", "0.05s", "--out",
                   out.string()})
              .exit_code == 0);
  // "second" as a kill -9 after its last checkpoint leaves it.
  for (const char* f : {"second/summary.json", "second/workers.csv", "results.csv"}) {
    fs::remove(out / f);
  }
  const auto file = [&](const std::string& lr) {
    std::ifstream in(cfg);
    std::stringstream s;
    s << in.rdbuf();
    std::ofstream(cfg, std::ios::trunc) << "lr = " << lr << "\n" << s.str();
  };
  const std::string original = [&] {
    std::ifstream in(cfg);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }();

  // The finished run "good" was run with lr 0.05: refused, nothing written.
  file("0.1");
  const auto before = race_files(out);
  auto r = run_cli({"race", "--config", cfg.string(), "--resume", "--out", out.string()});
  INFO(r.output);
  CHECK(r.exit_code == 1);
  // The race's first line ("race 'race': 2 runs into ..."), then the one error line.
  CHECK(line_count(r.output) == 2);
  CHECK_THAT(r.output, Contains("run 'good': " + (out / "good" / "summary.json").string() +
                                " was written for other settings than the experiment file's "
                                "now: lr = 0.1 (the run used 0.05)") &&
                           Contains("add --force to run the changed runs again"));
  CHECK(race_files(out) == before);

  // The file as it was, and the documented form (no --checkpoint-every): "good" kept, "second"
  // continued from its checkpoint.
  std::ofstream(cfg, std::ios::trunc) << original;
  r = run_cli({"race", "--config", cfg.string(), "--resume", "--out", out.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(race_files(out)["good/updates.csv"] == before.at("good/updates.csv"));
  std::ifstream log(out / "second" / "run.log");
  std::stringstream text;
  text << log.rdbuf();
  CHECK_THAT(text.str(), Contains("resume: run 'second'"));

  // Changed again, with --force: both runs run again with the file's lr, and every summary
  // says so.
  file("0.1");
  r = run_cli({"race", "--config", cfg.string(), "--resume", "--force", "--out", out.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(summary_lr(out / "good") == 0.1);
  CHECK(summary_lr(out / "second") == 0.1);
}
