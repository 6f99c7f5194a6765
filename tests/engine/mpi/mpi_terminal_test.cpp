// tools/mpirun.sh as a terminal runs it: Ctrl-C exits 130 with everything written, and rank 0
// draws the live progress line when STALESGD_LIVE_LINE says that its pipe ends at a terminal
// (docs/distributed.md, "Ctrl-C and the live line"). A build without MPI fails these cases with
// what to do, as the other MPI tests do.
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "engine/mpi/mpi_test_util.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd::test;

namespace {

// A real-clock run of 3 ranks that lasts far longer than the test, under tools/mpirun.sh.
std::string long_run(const std::string& out) {
  return "tools/mpirun.sh -np 3 " STALESGD_CLI
         " train --engine mpi --model softmax --delay exp:mean=5ms --time 60s --eval-every 0.2s "
         "--eval-samples 500 --out " +
         out;
}

// The text after the last `marker` in `output`, up to the end of its line.
std::string after(const std::string& output, const std::string& marker) {
  const auto at = output.rfind(marker);
  if (at == std::string::npos) return "";
  const auto from = at + marker.size();
  return output.substr(from, output.find('\n', from) - from);
}

}  // namespace

TEST_CASE("mpi: Ctrl-C under tools/mpirun.sh exits 130 and rank 0 writes everything",
          "[engine][mpi]") {
  require_mpi();
  const TempDir dir;
  const std::string out = (dir / "out").string();
  const std::string evals = out + "/evals.csv";
  // As a terminal's foreground job: a process group of its own with SIGINT at its default (a
  // non-interactive shell's background job ignores it), and the signal to the whole group, as
  // Ctrl-C sends it. It goes once the run has written two evaluations (the run is under way),
  // checked every 0.1 s up to 120 s; a watchdog stands in for a hang guard.
  const auto r = run_mpi_shell(
      "setsid env --default-signal=INT,TERM " + long_run(out) + " >" + (dir / "log").string() +
      " 2>&1 & job=$!; ( sleep 150; kill -KILL $job ) >/dev/null 2>&1 & dog=$!; i=0; "
      "while [ $(cat '" +
      evals +
      "' 2>/dev/null | wc -l) -lt 3 ] && [ $i -lt 1200 ] && kill -0 $job 2>/dev/null; "
      "do sleep 0.1; i=$((i+1)); done; kill -INT -$job; wait $job; echo exit=$?; "
      "pkill -P $dog sleep; kill $dog 2>/dev/null");
  INFO(r.output << slurp(dir / "log"));
  CHECK(after(r.output, "exit=") == "130");
  CHECK(summary_status(out) == "interrupted");
  std::ifstream in(out + "/summary.json");
  REQUIRE(in);
  const auto summary = nlohmann::json::parse(in);
  CHECK(summary["stop_reason"] == "interrupted");
  // The journals are whole: every update and evaluation the summary counts is in them.
  const Run run = read_run(out);
  CHECK(summary["iterations"].get<long>() > 0);
  CHECK(run.updates.size() == summary["iterations"].get<std::size_t>());
  CHECK(run.workers.size() == 2);
  CHECK(read_csv(evals).size() >= 2);
}

TEST_CASE("mpi: rank 0 draws the live line under tools/mpirun.sh when STALESGD_LIVE_LINE is set",
          "[engine][mpi]") {
  require_mpi();
  const TempDir dir;
  // stderr is a pipe here, as under mpirun: without the variable the progress is log lines, with
  // it the live line ("\r\033[K" and the text, cut to the width it gives).
  const std::string run = "tools/mpirun.sh -np 3 " STALESGD_CLI
                          " train --engine mpi --model softmax --delay exp:mean=5ms --time 2s "
                          "--eval-every 1000s --eval-samples 500 --out ";
  const auto live =
      run_mpi_shell("STALESGD_LIVE_LINE=60 timeout 60 " + run + (dir / "live").string());
  INFO(live.output);
  REQUIRE(live.exit_code == 0);
  const auto drawn = live.output.find("\r\033[K");
  REQUIRE(drawn != std::string::npos);
  const std::string line =
      live.output.substr(drawn + 4, live.output.find('\r', drawn + 4) - drawn - 4);
  CHECK(line.find("iteration ") != std::string::npos);
  CHECK(line.size() <= 59);

  const auto plain = run_mpi_shell("timeout 60 " + run + (dir / "plain").string());
  INFO(plain.output);
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.output.find('\r') == std::string::npos);
  CHECK(plain.output.find('\033') == std::string::npos);
}
