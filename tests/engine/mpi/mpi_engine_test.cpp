// --engine mpi under mpirun on this machine (tools/mpirun.sh): each rule's semantics checked
// from the CSVs rank 0 writes, as tests/engine/thread_engine_test.cpp checks the thread
// engine's records; P = 1 sync against the sequential trainer bit for bit; accuracy; and the
// start-up failures, each one line and a non-zero exit within seconds. A build without MPI
// fails every case here with what to do, rather than skipping them.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "engine/mpi/mpi_test_util.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd::test;

namespace {

Run train_ok(int ranks, const std::string& args, const std::string& env = "") {
  require_mpi();
  const TempDir out;
  const auto r = mpi_train(ranks, args + " --eval-samples 1000 --out " + out.path().string(), env);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return read_run(out.path());
}

}  // namespace

TEST_CASE("mpi: k-sync updates hold K fresh gradients of K distinct workers", "[engine][mpi]") {
  // Also with the clock offsets estimated by ping-pong, as for ranks on other hosts.
  const std::string env = GENERATE(as<std::string>{}, "", "STALESGD_MPI_CLOCK=estimate");
  INFO("env: " << env);
  // 3 worker ranks x 2 threads: P = 6.
  const auto run = train_ok(4,
                            "--workers-per-rank 2 --rule k-sync --k 2 --delay exp:mean=2ms "
                            "--iterations 100",
                            env);
  REQUIRE(run.updates.size() == 100);
  REQUIRE(run.workers.size() == 6);
  for (const auto& [it, gs] : run.by_update) {
    CHECK(gs.size() == 2);
    CHECK(distinct_workers(gs));
    for (const auto& g : gs) CHECK(g.staleness == 0);
  }
  // Each update cuts the P - K minibatches in flight, exactly, wherever their workers are.
  CHECK(run.total("cancelled") == 4 * 100);
  CHECK(run.total("applied") == 200);
}

TEST_CASE("mpi: k-batch-sync takes K fresh gradients, a fast worker several", "[engine][mpi]") {
  const auto run = train_ok(3,
                            "--workers-per-rank 2 --rule k-batch-sync --k 4 "
                            "--delay 'const:20ms;w0=const:2ms' --iterations 30");
  REQUIRE(run.updates.size() == 30);
  bool repeated = false;
  for (const auto& [it, gs] : run.by_update) {
    CHECK(gs.size() == 4);
    for (const auto& g : gs) CHECK(g.staleness == 0);
    repeated = repeated || !distinct_workers(gs);
  }
  CHECK(repeated);
}

TEST_CASE("mpi: k-async takes K distinct workers and stale gradients occur", "[engine][mpi]") {
  const auto run = train_ok(3,
                            "--workers-per-rank 4 --rule k-async --k 3 --delay exp:mean=2ms "
                            "--iterations 150");
  REQUIRE(run.updates.size() == 150);
  long stale = 0;
  for (const auto& [it, gs] : run.by_update) {
    CHECK(gs.size() == 3);
    CHECK(distinct_workers(gs));
    for (const auto& g : gs) stale += g.staleness > 0;
  }
  CHECK(stale > 0);
  CHECK(run.total("cancelled") == 0);
}

TEST_CASE("mpi: k-batch-async takes any K gradients, repeated workers occur", "[engine][mpi]") {
  const auto run = train_ok(3,
                            "--workers-per-rank 2 --rule k-batch-async --k 4 "
                            "--delay 'const:20ms;w0=const:2ms' --iterations 30");
  REQUIRE(run.updates.size() == 30);
  bool repeated = false;
  for (const auto& [it, gs] : run.by_update) {
    CHECK(gs.size() == 4);
    repeated = repeated || !distinct_workers(gs);
  }
  CHECK(repeated);
  CHECK(run.total("cancelled") == 0);
}

TEST_CASE("mpi: async applies each gradient alone, and they are stale", "[engine][mpi]") {
  const auto run = train_ok(3,
                            "--workers-per-rank 2 --rule async --delay exp:mean=2ms "
                            "--iterations 200");
  REQUIRE(run.updates.size() == 200);
  double staleness = 0.0;
  for (const auto& u : run.updates) {
    CHECK(num(u, "n_grads") == 1);
    staleness += std::stod(u.at("mean_staleness"));
  }
  // P - 1 = 3 in theory; message latency and 2 shared cores move it, not to 0.
  CHECK(staleness / 200.0 > 1.0);
  CHECK(run.total("cancelled") == 0);
}

TEST_CASE("mpi: sync waits for all P workers", "[engine][mpi]") {
  const auto run = train_ok(4, "--rule sync --delay exp:mean=2ms --iterations 50");
  REQUIRE(run.updates.size() == 50);
  for (const auto& [it, gs] : run.by_update) {
    CHECK(gs.size() == 3);
    CHECK(distinct_workers(gs));
    for (const auto& g : gs) CHECK(g.staleness == 0);
  }
  CHECK(run.total("cancelled") == 0);
}

TEST_CASE("mpi: P = 1 sync reproduces the sequential trainer bit for bit", "[engine][mpi]") {
  require_mpi();
  const TempDir out;
  const auto ps = mpi_train(
      2, "--rule sync --iterations 200 --eval-samples 2000 --out " + (out / "mpi").string());
  INFO(ps.output);
  REQUIRE(ps.exit_code == 0);
  const auto seq = run_cli({"train", "--sequential", "--model", "softmax", "--batch", "16",
                            "--iterations", "200", "--eval-every", "1000s", "--eval-samples",
                            "2000", "--no-progress", "--out", (out / "seq").string()});
  INFO(seq.output);
  REQUIRE(seq.exit_code == 0);
  const auto summary = [&](const char* name) {
    std::ifstream in(out / name / "summary.json");
    return nlohmann::json::parse(in);
  };
  const auto a = summary("mpi");
  const auto b = summary("seq");
  // Doubles compared exactly: the same gradients applied in the same order on the same floats.
  CHECK(a["final_test_loss"].get<double>() == b["final_test_loss"].get<double>());
  CHECK(a["final_test_error"].get<double>() == b["final_test_error"].get<double>());
  CHECK(a["iterations"] == 200);
}

TEST_CASE("mpi: softmax learns MNIST in 300 iterations", "[engine][mpi]") {
  require_mpi();
  const auto r = mpi_train(3,
                           "--workers-per-rank 2 --rule k-async --k 2 "
                           "--iterations 300 --eval-samples 0");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto at = r.output.find("final test error");
  REQUIRE(at != std::string::npos);
  CHECK(std::stod(r.output.substr(at + 18)) < 0.2);
}

TEST_CASE("mpi: start-up failures are one line and a non-zero exit", "[engine][mpi]") {
  require_mpi();
  // Every rank exits on its own here; Open MPI's 1 s grace before SIGKILL instead of
  // tools/mpirun.sh's 3 s (which gives rank 0 time to write when mpirun ends a job) keeps the
  // case short. Set in the environment, it wins over the script's default.
  setenv("OMPI_MCA_odls_base_sigkill_timeout", "1", 1);
  const TempDir empty;
  struct Case {
    int ranks;
    std::string args;
    int exit_code;
    std::string says;
  };
  for (const auto& c : std::vector<Case>{
           {3, "--workers 5 --iterations 10", 2, "--workers 5 does not match"},
           {3, "--workers-per-rank 0 --iterations 10", 2, "--workers-per-rank 0"},
           {3, "--clock virtual --iterations 10", 2, "--clock virtual"},
           {3, "--sequential --iterations 10", 2, "--sequential"},
           {3, "--server thread --iterations 10", 2, "--server thread"},
           // Rank 0 alone checks it; every rank stops with it.
           {3, "--iterations 10 --save-model /dev/null/x.npy", 1,
            "): --save-model /dev/null/x.npy: /dev/null is not a folder"},
           {1, "--iterations 10", 2, "at least 2 ranks"},
           // Every rank fails to load; rank 0 names the first.
           {3, "--iterations 10 --data-dir " + empty.path().string(), 1, "rank 0 (host "},
       }) {
    const auto r = mpi_train(c.ranks, c.args);
    // What came after the first line goes first: a log cut short still shows it.
    const auto first_end = r.output.find('\n');
    INFO(c.args << "; after the first line: "
                << (first_end == std::string::npos ? "" : r.output.substr(first_end + 1)));
    INFO(r.output);
    CHECK(r.exit_code == c.exit_code);
    CHECK(line_count(r.output) == 1);
    CHECK(r.output.find(c.says) != std::string::npos);
  }
  // Only the worker ranks miss their data (an MPMD launch: rank 0 gets the real data dir).
  const std::string flags = " train --engine mpi --model softmax --iterations 10 --no-progress";
  const auto worker =
      run_mpi_shell("timeout 60 tools/mpirun.sh -np 1 " STALESGD_CLI + flags +
                    " : -np 2 " STALESGD_CLI + flags + " --data-dir " + empty.path().string());
  INFO(worker.output);
  CHECK(worker.exit_code == 1);
  CHECK(line_count(worker.output) == 1);
  CHECK(worker.output.find("stalesgd: error: rank 1 (host ") != std::string::npos);
  // A worker rank that fails alone (its --config missing on its host) while rank 0 waits for it
  // at the start-up agreement: it names itself and ends the job.
  const auto alone = run_mpi_shell("timeout 60 tools/mpirun.sh -np 1 " STALESGD_CLI + flags +
                                   " : -np 1 " STALESGD_CLI + flags + " --config " +
                                   (empty / "run.toml").string());
  INFO(alone.output);
  CHECK(alone.exit_code == 2);
  CHECK(line_count(alone.output) == 1);
  CHECK(alone.output.find("stalesgd: error: rank 1 (host ") != std::string::npos);
  CHECK(alone.output.find("--config " + (empty / "run.toml").string() + ": file not found") !=
        std::string::npos);
  // Under mpirun, but without --engine mpi: rank 0 says what to add, nobody trains or writes.
  const auto plain = run_mpi_shell("timeout 60 tools/mpirun.sh -np 3 " STALESGD_CLI
                                   " train --iterations 10 --no-progress --out " +
                                   (empty / "plain").string());
  INFO(plain.output);
  CHECK(plain.exit_code == 2);
  CHECK(line_count(plain.output) == 1);
  CHECK(plain.output.find("without --engine mpi: add --engine mpi") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(empty / "plain"));
  // --fail naming a rank the job does not have.
  const auto rank = mpi_train(3, "--iterations 10 --fail rank3:crash@1s");
  INFO(rank.output);
  CHECK(rank.exit_code == 2);
  CHECK(line_count(rank.output) == 1);
  CHECK(rank.output.find("there is no rank 3: the worker ranks are rank1 to rank2") !=
        std::string::npos);
  // Not under mpirun at all.
  const auto r = run_cli({"train", "--engine", "mpi", "--iterations", "10"});
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.output) == 1);
  CHECK(r.output.find("not started by mpirun") != std::string::npos);
  unsetenv("OMPI_MCA_odls_base_sigkill_timeout");
}

TEST_CASE("mpi: SIGTERM to mpirun stops every rank and rank 0 writes its records",
          "[engine][mpi]") {
  require_mpi();
  const TempDir out;
  // mpirun passes the signal on to every rank as SIGTERM; rank 0 stops the run as on Ctrl-C.
  // The signal goes out once rank 0's receive thread ("mpi-server-recv") runs, so it finds the
  // run under way (under load, start-up can take longer than Open MPI's grace).
  const std::string o = out.path().string();
  const auto r = run_mpi_shell(
      // 3 s before SIGKILL (default 1 s): room for rank 0 to write under a sanitizer. The
      // signal goes to mpirun alone, not to tools/mpirun.sh, which passes a signal on its own
      // way (mpi_terminal_test.cpp), and a watchdog stands in for a hang guard.
      "tools/mpirun.sh --mca odls_base_sigkill_timeout 3 -np 3 " STALESGD_CLI
      " train --engine mpi --model softmax --delay exp:mean=5ms --time 60s --eval-every 1000s "
      "--eval-samples 500 --no-progress --out " +
      o +
      " & job=$!; ( sleep 90; kill -KILL $job ) >/dev/null 2>&1 & dog=$!; "
      "for i in $(seq 1200); do for p in $(pgrep -x stalesgd); do "
      "grep -q -- '" +
      o +
      "' /proc/$p/cmdline 2>/dev/null && grep -qx mpi-server-recv /proc/$p/task/*/comm "
      "2>/dev/null && break 2; done; sleep 0.05; done; sleep 1; "
      "kill -TERM $(pgrep -P $job -x mpirun); wait $job; echo exit=$?; pkill -P $dog sleep; "
      "kill $dog 2>/dev/null");
  INFO(r.output);
  CHECK(r.output.find("exit=0") == std::string::npos);
  std::ifstream in(out / "summary.json");
  REQUIRE(in);
  const auto summary = nlohmann::json::parse(in);
  CHECK(summary["stop_reason"] == "interrupted");
  CHECK(summary["iterations"].get<long>() > 0);
  CHECK(summary["wall_s"].get<double>() < 60.0);
  const auto updates = read_csv(out / "updates.csv");
  CHECK(updates.size() == summary["iterations"].get<std::size_t>());
}

TEST_CASE("mpi: a race runs an engine = \"mpi\" run beside a thread run", "[engine][mpi]") {
  require_mpi();
  const TempDir dir;
  {
    std::ofstream toml(dir / "race.toml");
    toml << "model = \"softmax\"\nworkers = 4\ndelay = \"exp:mean=2ms\"\niterations = 60\n"
            "eval_every = \"1000s\"\neval_samples = 500\ndata_dir = \"" STALESGD_SOURCE_DIR
            "/data\"\n"
            "[[run]]\nlabel = \"threads\"\nrule = \"k-sync\"\nk = 2\n"
            "[[run]]\nlabel = \"ranks\"\nrule = \"k-sync\"\nk = 2\nengine = \"mpi\"\n"
            "workers_per_rank = 2\n";
  }
  const auto r = run_mpi_shell(std::string(STALESGD_CLI) + " race --config " +
                               (dir / "race.toml").string() + " --out " + (dir / "out").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto rows = read_csv(dir / "out" / "results.csv");
  REQUIRE(rows.size() == 2);
  for (const auto& row : rows) {
    CHECK(row.at("iterations") == "60");
    CHECK(row.at("stop_reason") == "iterations");
  }
  std::ifstream in(dir / "out" / "ranks" / "summary.json");
  REQUIRE(in);
  const auto summary = nlohmann::json::parse(in);
  CHECK(summary["config"]["engine"] == "mpi");
  CHECK(summary["config"]["workers_per_rank"] == 2);
  // The k-sync semantics hold in the run the race launched: P - K cuts per update.
  CHECK(summary["gradients"]["cancelled"] == 2 * 60);
  CHECK(summary["gradients"]["applied"] == 2 * 60);

  // STALESGD_MPIRUN is a command line: a launcher whose path has a space, quoted.
  const auto spaced = dir / "with space";
  std::filesystem::create_directories(spaced);
  {
    std::ofstream wrapper(spaced / "mpirun");
    wrapper << "#!/bin/sh\nexec " STALESGD_SOURCE_DIR "/tools/mpirun.sh \"$@\"\n";
  }
  std::filesystem::permissions(spaced / "mpirun", std::filesystem::perms::owner_all);
  const auto quoted =
      run_mpi_shell("STALESGD_MPIRUN=\"'" + (spaced / "mpirun").string() +
                    "' --mca btl self,vader\" " STALESGD_CLI " race --config " +
                    (dir / "race.toml").string() + " --only ranks --out " + (dir / "q").string());
  INFO(quoted.output);
  CHECK(quoted.exit_code == 0);
  CHECK(std::filesystem::exists(dir / "q" / "ranks" / "summary.json"));
  const auto unbalanced =
      run_mpi_shell("STALESGD_MPIRUN=\"mpirun 'oops\" " STALESGD_CLI " race --config " +
                    (dir / "race.toml").string() + " --only ranks --out " + (dir / "u").string() +
                    " 2>&1 >/dev/null");
  INFO(unbalanced.output);
  CHECK(unbalanced.exit_code != 0);
  CHECK(line_count(unbalanced.output) == 1);
  CHECK(unbalanced.output.find("STALESGD_MPIRUN='mpirun 'oops' is not a command line") !=
        std::string::npos);

  // P that no number of worker ranks gives: refused when the file is read.
  {
    std::ofstream toml(dir / "bad.toml");
    toml << "model = \"softmax\"\niterations = 10\n[[run]]\nlabel = \"threads\"\n"
            "[[run]]\nlabel = \"odd\"\nengine = \"mpi\"\nworkers = 5\nworkers_per_rank = 2\n";
  }
  const auto bad =
      run_mpi_shell(std::string(STALESGD_CLI) + " race --config " + (dir / "bad.toml").string() +
                    " --out " + (dir / "bad").string() + " 2>&1 >/dev/null");
  INFO(bad.output);
  CHECK(bad.exit_code == 2);  // a usage error, with the file and the line
  CHECK(line_count(bad.output) == 1);
  CHECK(bad.output.find("bad.toml:5: run 'odd': --workers 5 is not a multiple of "
                        "--workers-per-rank 2") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "bad" / "threads"));
}

TEST_CASE("mpi: --fail crashes a worker thread and stops a whole rank, and the run goes on",
          "[engine][mpi][failures]") {
  require_mpi();
  const TempDir out;
  // 3 worker ranks x 2 threads: w1 (rank 1) crashes, rank 3 (w4, w5) stops itself; k-async
  // with K = 2 runs on with the three workers left.
  const auto r = mpi_train(4,
                           "--workers-per-rank 2 --rule k-async --k 2 --delay exp:mean=5ms "
                           "--time 4s --worker-timeout 1s --fail 'w1:crash@0.5s;rank3:hang@1s' "
                           "--eval-samples 500 --out " +
                               out.path().string());
  INFO(r.output);
  CHECK(r.exit_code == 0);
  std::ifstream in(out / "summary.json");
  REQUIRE(in);
  const auto summary = nlohmann::json::parse(in);
  CHECK(summary["stop_reason"] == "time");
  const auto& failures = summary["failures"];
  REQUIRE(failures.size() == 3);
  CHECK(failures[0]["worker"] == 1);
  CHECK(failures[0]["how"] == "crash");
  // The crash is known from its rank's notice, not by the 1 s timeout.
  CHECK(failures[0]["at_s"].get<double>() >= 0.5);
  CHECK(failures[0]["at_s"].get<double>() < 1.5);
  for (std::size_t i = 1; i < 3; ++i) {
    CHECK(failures[i]["worker"].get<int>() >= 4);
    CHECK(failures[i]["how"] == "hang");
    // Found --worker-timeout after the minibatch in flight was due.
    CHECK(failures[i]["at_s"].get<double>() > 1.9);
  }
  CHECK(summary["ranks"][3]["answered"] == false);
  CHECK(summary["ranks"][1]["answered"] == true);
  // Updates went on after the failures, from w0, w2 and w3 alone.
  const auto run = read_run(out.path());
  for (const auto& u : run.updates) {
    if (std::stod(u.at("wall_s")) < 2.5) continue;
    for (const auto& g : run.by_update.at(num(u, "iteration"))) {
      CHECK((g.worker == 0 || g.worker == 2 || g.worker == 3));
    }
  }
  CHECK(std::stod(run.updates.back().at("wall_s")) > 3.5);
}
