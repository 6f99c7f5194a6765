// race --resume: a race killed with kill -9 finishes as the uninterrupted one would (what it
// keeps when the experiment file changed: race_test.cpp).
#include <fstream>

#include <catch2/catch.hpp>

#include "support/fixtures.hpp"
#include "support/sanitized.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
namespace fs = std::filesystem;

TEST_CASE("race CLI: a race killed with kill -9 and resumed writes the uninterrupted race's files",
          "[experiment][cli][resume]") {
  TempDir dir;
  const fs::path config = dir / "three.toml";
  // Lighter where the sanitizers slow compute 10-40x, and shorter under ThreadSanitizer (the
  // kill still lands in the second run's first seconds); the same three runs and checks.
  std::ofstream(config) << "name = \"three\"\nmodel = \"" << (kSanitized ? "softmax" : "mlp")
                        << "\"\nclock = \"virtual\"\nworkers = 4\n"
                           "delay = \"exp:mean=10ms\"\ntime = \""
                        << (kThreadSanitized ? "4s"
                            : kSanitized     ? "8s"
                                             : "15s")
                        << "\"\neval_every = \"1s\"\n"
                           "[[run]]\nlabel = \"k-sync\"\nrule = \"k-sync\"\nk = 2\n"
                           "[[run]]\nlabel = \"k-async\"\nrule = \"k-async\"\nk = 2\n"
                           "[[run]]\nlabel = \"async\"\nrule = \"async\"\n";
  const std::string race = std::string(STALESGD_CLI) + " race --config " + config.string() +
                           " --checkpoint-every 1s --out ";
  const fs::path a = dir / "a", b = dir / "b";
  REQUIRE(run_shell(race + a.string()).exit_code == 0);
  // Killed once the second run has checkpointed.
  const auto killed =
      run_shell(race + b.string() + " >/dev/null & pid=$!; for i in $(seq 1500); do [ -e " +
                (b / "k-async" / "checkpoint.bin").string() +
                " ] && break; sleep 0.02; done; sleep 0.1; kill -9 $pid; wait $pid;"
                " echo exit=$?");
  INFO(killed.output);
  REQUIRE(killed.output.find("exit=137") != std::string::npos);
  REQUIRE_FALSE(fs::exists(b / "results.csv"));
  REQUIRE(summary_status(b / "k-async") == "running");  // written at the start, never ended
  const auto resumed = run_shell(race + b.string() + " --resume");
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  for (const char* f :
       {"results.csv", "k-sync/summary.json", "k-async/updates.csv", "k-async/gradients.csv",
        "k-async/evals.csv", "k-async/summary.json", "async/updates.csv", "async/summary.json"}) {
    INFO(f);
    CHECK(output_bytes(a / f) == output_bytes(b / f));
  }
}
