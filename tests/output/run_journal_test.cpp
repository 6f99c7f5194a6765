// The run's outputs as a journal: rows appear while the run goes, a failed write ends the run
// with the path and the OS error and leaves whole rows, an --out holding a run is refused,
// and a signal during a long evaluation backlog still ends the run at once with its outputs.
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/engine_test_util.hpp"
#include "output/run_journal.hpp"
#include "support/summary.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

// Every line ends with '\n' and has the header's number of fields.
void check_whole_rows(const fs::path& path) {
  INFO(path);
  const std::string text = slurp(path);
  REQUIRE_FALSE(text.empty());
  CHECK(text.back() == '\n');
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  const auto fields = std::count(line.begin(), line.end(), ',');
  while (std::getline(in, line)) CHECK(std::count(line.begin(), line.end(), ',') == fields);
}

}  // namespace

TEST_CASE("journal: rows are appended and a resumed journal is cut back to its offsets",
          "[output]") {
  TempDir dir;
  JournalOffsets at;
  {
    auto j = RunJournal::open(dir.path(), RunJournal::Existing::kRefuse);
    REQUIRE(j.ok());
    // The second with --record-drift's columns: empty where not recorded.
    std::vector<UpdateRecord> u{{1, 0.5, 2, 0.0, 0, 0.05, 2.3},
                                {2, 1.0, 2, 0.5, 1, 0.05, 2.1, 0.25, 3.5}};
    REQUIRE((*j)->append(std::span(u).first(1)).ok());
    REQUIRE((*j)->flush().ok());
    at = (*j)->offsets();
    REQUIRE((*j)->append(std::span(u).subspan(1)).ok());
    REQUIRE((*j)->close().ok());
  }
  CHECK(at.update_rows == 1);
  CHECK(slurp(dir / "updates.csv") ==
        "iteration,wall_s,n_grads,mean_staleness,max_staleness,lr,minibatch_loss,drift_sq,"
        "grad_sq\n"
        "1,0.500000,2,0.0000,0,0.05,2.3,,\n"
        "2,1.000000,2,0.5000,1,0.05,2.1,0.25,3.5\n");
  {
    auto j = RunJournal::open(dir.path(), RunJournal::Existing::kContinue, at);
    REQUIRE(j.ok());
    std::vector<UpdateRecord> u{{2, 1.25, 1, 0.0, 0, 0.05, 2.0}};
    REQUIRE((*j)->append(u).ok());
    REQUIRE((*j)->close().ok());
    CHECK((*j)->offsets().update_rows == 2);
  }
  CHECK(slurp(dir / "updates.csv") ==
        "iteration,wall_s,n_grads,mean_staleness,max_staleness,lr,minibatch_loss,drift_sq,"
        "grad_sq\n"
        "1,0.500000,2,0.0000,0,0.05,2.3,,\n"
        "2,1.250000,1,0.0000,0,0.05,2,,\n");
  // A journal file shorter than the checkpoint says is a folder changed behind its back.
  fs::resize_file(dir / "gradients.csv", 3);
  JournalOffsets longer = at;
  longer.gradient_bytes = 100;
  auto bad = RunJournal::open(dir.path(), RunJournal::Existing::kContinue, longer);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().message, Contains("gradients.csv holds 3 bytes but the checkpoint"));
}

TEST_CASE("journal: evals.csv rows end with train_objective, then val_loss and val_error",
          "[output]") {
  TempDir dir;
  {
    auto j = RunJournal::open(dir.path(), RunJournal::Existing::kRefuse);
    REQUIRE(j.ok());
    std::vector<EvalRecord> e{{0.0, 0, 2.30259, 2.31, 0.9, 3.01259},
                              {0.5, 12, 1.5, 1.6, 0.4, 1.5, 1.7, 0.45, 0.75, 500, 1000}};
    REQUIRE((*j)->append(e).ok());
    REQUIRE((*j)->close().ok());
    CHECK((*j)->offsets().eval_rows == 2);
  }
  CHECK(slurp(dir / "evals.csv") ==
        "wall_s,iteration,train_loss,test_loss,test_error,train_objective,val_loss,val_error,"
        "scored_s,test_samples,train_samples\n"
        "0.000000,0,2.30259,2.31,0.9,3.01259,,,0.000000,0,0\n"  // no holdout: empty
        "0.500000,12,1.5,1.6,0.4,1.5,1.7,0.45,0.750000,500,1000\n");
}

TEST_CASE("train CLI: an --out holding a run is refused unless --force", "[output][cli]") {
  TempDir dir;
  const std::string base =
      kCli + " train --model softmax --no-progress --out " + dir.path().string();
  REQUIRE(run_shell(base + " --iterations 5").exit_code == 0);
  const auto again = run_shell(base + " --iterations 5");
  CHECK(again.exit_code == 1);
  CHECK(line_count(again.output) == 1);
  CHECK_THAT(again.output,
             Contains("already holds a run") && Contains("--force") && Contains("--resume"));
  const auto forced = run_shell(base + " --force --iterations 7");
  CHECK(forced.exit_code == 0);
  CHECK(read_summary(dir.path())["iterations"] == 7);
}

TEST_CASE("train CLI: a folder holds a run only once training started", "[output][cli]") {
  TempDir dir;
  const fs::path out = dir / "run";
  const std::string base =
      kCli + " train --model softmax --no-progress --iterations 5 --out " + out.string();
  // A misspelt model is a usage error found before --out is touched.
  auto r = run_shell(kCli + " train --model resnet --iterations 5 --out " + out.string());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("unknown model 'resnet'"));
  CHECK_FALSE(fs::exists(out));
  // Refused after --out was opened, before the first update: what it left blocks nothing.
  r = run_shell(base + " --data-dir " + (dir / "no-data").string());
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Contains("file not found"));
  REQUIRE(fs::exists(out / "updates.csv"));
  r = run_shell(base);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(read_summary(out)["iterations"] == 5);
  // Killed before its first checkpoint (rows, the start's summary, no checkpoint): neither a
  // plain start nor --resume, and both say --force starts it again.
  std::ofstream(out / "summary.json") << R"({"status": "running"})";
  fs::remove(out / "workers.csv");
  const std::string updates = slurp(out / "updates.csv");
  r = run_shell(base);
  CHECK(r.exit_code == 1);
  CHECK(line_count(r.output) == 1);
  CHECK_THAT(r.output, Contains("holds a run cut before its first checkpoint") &&
                           Contains("updates.csv has rows") && Contains("--force"));
  r = run_shell(kCli + " train --no-progress --resume " + out.string());
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Contains("start it again with --force --out " + out.string()));
  CHECK(slurp(out / "updates.csv") == updates);
  r = run_shell(base + " --force");
  CHECK(r.exit_code == 0);
  // Killed before its first update (the start's summary, headers alone): started again as if
  // the folder were empty.
  std::ofstream(out / "summary.json") << R"({"status": "running"})";
  for (const char* f : {"updates.csv", "gradients.csv"}) {
    const std::string all = slurp(out / f);
    std::ofstream(out / f) << all.substr(0, all.find('\n') + 1);
  }
  r = run_shell(base);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(summary_status(out) == "complete");
}

TEST_CASE("train CLI: an --out that cannot be created is found before training", "[output][cli]") {
  TempDir dir;
  std::ofstream(dir / "file") << "x";
  // A folder under a regular file: ENOTDIR, whoever runs the test (root included).
  const auto r = run_shell(kCli + " train --model softmax --time 600s --no-progress --out " +
                           (dir / "file" / "run").string());
  CHECK(r.exit_code == 1);
  CHECK(line_count(r.output) == 1);
  CHECK_THAT(r.output, Contains("cannot create --out") && Contains("Not a directory"));
}

TEST_CASE("train CLI: a write that fails ends the run with the path and the OS error",
          "[output][cli]") {
  // RLIMIT_FSIZE makes a write past 16 KiB fail with EFBIG, as a full disk fails with ENOSPC;
  // SIGXFSZ is ignored so the write returns the error instead of killing the process.
  TempDir dir;
  const auto r =
      run_shell("trap '' XFSZ; ulimit -f 16; exec " + kCli +
                " train --model softmax --rule async --workers 4 --delay exp:mean=1ms --time 600s "
                "--no-progress --out " +
                dir.path().string());
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(line_count(r.output) == 1);
  CHECK_THAT(r.output,
             Contains("cannot write " + dir.path().string()) && Contains("File too large"));
  const auto j = read_summary(dir.path());
  CHECK(j["status"] == "failed");
  CHECK(j["stop_reason"] == "failed");
  CHECK_THAT(j["error"].get<std::string>(), Contains("File too large"));
  for (const char* f : {"updates.csv", "gradients.csv", "evals.csv", "workers.csv"}) {
    check_whole_rows(dir / f);
  }
}

TEST_CASE("train CLI: rows reach the files while the run goes", "[output][cli]") {
  // Run for 600 s in the background; as soon as updates.csv holds rows, stop the run with
  // SIGTERM. A journal that wrote only at the end fails here.
  const std::string server = GENERATE("inline", "thread", "hogwild");
  INFO("--server " << server);
  TempDir dir;
  const fs::path updates = dir / "updates.csv";
  const auto r = run_shell(
      kCli +
      " train --model softmax --rule async --workers 2 --delay exp:mean=2ms --time 600s "
      "--no-progress --server " +
      server + " --out " + dir.path().string() +
      " >/dev/null & pid=$!; rows=0; for i in $(seq 600); do " + "rows=$(cat " + updates.string() +
      " 2>/dev/null | wc -l); [ $rows -gt 20 ] && break; " + "sleep 0.05; done; grep -q " +
      "'\"status\": \"running\"' " + (dir / "summary.json").string() +
      " && echo summary-running; echo rows=$rows; kill -TERM $pid; wait $pid; echo exit=$?");
  INFO(r.output);
  // summary.json says "running" from the start, until the end replaces it.
  CHECK(r.output.find("summary-running") != std::string::npos);
  CHECK(r.output.find("rows=0\n") == std::string::npos);
  CHECK(r.output.find("exit=143") != std::string::npos);
  CHECK(read_summary(dir.path())["status"] == "interrupted");  // not passed off as complete
}

TEST_CASE("train CLI: SIGTERM during a long evaluation backlog ends the run with its outputs",
          "[output][cli]") {
  // A snapshot every millisecond outruns the evaluator: the backlog is bounded (snapshots are
  // skipped and counted) and the signal leaves only the final snapshot to evaluate.
  TempDir dir;
  const auto r = run_shell(
      kCli +
      " train --model mlp --rule async --workers 2 --delay none --time 600s --eval-every 1ms "
      "--no-progress --out " +
      dir.path().string() +
      " >/dev/null & pid=$!; for i in $(seq 1200); do "
      "[ $(ls /proc/$pid/task 2>/dev/null | wc -l) -ge 4 ] && break; sleep 0.05; done; "
      "sleep 2; kill -TERM $pid; "
      // A hang guard, not a timing assertion: 60 s for what takes well under one.
      "for i in $(seq 600); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done; "
      "kill -0 $pid 2>/dev/null && { echo hung; kill -KILL $pid; }; wait $pid; echo exit=$?");
  INFO(r.output);
  CHECK(r.output.find("hung") == std::string::npos);
  CHECK(r.output.find("exit=143") != std::string::npos);
  const auto j = read_summary(dir.path());
  CHECK(j["stop_reason"] == "interrupted");
  CHECK(j["evals_skipped"].get<int>() > 0);
  check_whole_rows(dir / "evals.csv");
}
