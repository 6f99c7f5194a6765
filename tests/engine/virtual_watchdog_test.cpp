// VirtualWatchdog (src/engine/virtual_watchdog.cpp): a virtual clock that stands still for its
// quiet limit of events, or snapshots due past kMaxVirtualEvaluations, stop the run; and through
// the real binary such a run ends stalled with one line, exit 1, everything written.
#include "engine/virtual_watchdog.hpp"

#include <catch2/catch.hpp>

#include <fstream>

#include "support/fixtures.hpp"
#include "support/summary.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

TEST_CASE("virtual watchdog: 10,000 + 8 P events at one instant without progress are a stall",
          "[engine][virtual][failures]") {
  TrainerOptions o;
  o.workers = 4;
  o.time_s = 2.0;
  VirtualWatchdog dog(o);
  REQUIRE(dog.quiet_limit() == 10'032);
  // Under a --time budget only the clock counts: updates at one instant are no progress.
  CHECK(dog.check(0.0, 0).empty());
  for (std::uint64_t i = 1; i < dog.quiet_limit(); ++i) REQUIRE(dog.check(0.0, i).empty());
  CHECK(dog.check(0.0, dog.quiet_limit()) ==
        "the run stalled: its virtual clock stood at 0 s for 10032 events (iteration 10032); the "
        "delays drew no time: give each gradient a time (e.g. --compute-time 10ms) or a --delay "
        "that draws one");
  // The clock moving starts the count again.
  VirtualWatchdog moving(o);
  for (std::uint64_t i = 0; i < 3 * moving.quiet_limit(); ++i) {
    REQUIRE(moving.check(1e-6 * static_cast<double>(i / 100), 0).empty());
  }
  // With an --iterations budget an update is progress too, and an event without one is not.
  o.iterations = 1'000'000;
  VirtualWatchdog counted(o);
  for (std::uint64_t i = 0; i < 3 * counted.quiet_limit(); ++i) {
    REQUIRE(counted.check(0.0, i).empty());
  }
  std::string said;
  for (std::uint64_t i = 0; i <= counted.quiet_limit() && said.empty(); ++i) {
    said = counted.check(0.0, 7);
  }
  CHECK_THAT(said, Contains("for 10032 events without an update (iteration 7)"));
}

TEST_CASE("virtual watchdog: snapshots due past the maximum stop the run before one is scored",
          "[engine][virtual][failures]") {
  TrainerOptions o;
  o.iterations = 10;
  o.eval_every_s = 0.001;
  VirtualWatchdog dog(o);
  CHECK(dog.check(0.001 * kMaxVirtualEvaluations, 0).empty());  // the maximum itself
  CHECK(dog.check(0.001 * (kMaxVirtualEvaluations + 1), 0) ==
        "the run stalled: by 100.001 s of its virtual clock --eval-every 1ms asks for 1e+05 "
        "evaluations, over the 100000 a virtual-clock run scores (each at once and in full); "
        "raise --eval-every, or give --time so that it is checked before the run");
  // None is due at or past --time: an event after it asks for none of them.
  o.time_s = 50.0;
  VirtualWatchdog timed(o);
  CHECK(timed.check(1e9, 0).empty());
}

TEST_CASE(
    "virtual watchdog, CLI: a run whose clock cannot move ends stalled with one line, exit 1, "
    "every file written",
    "[engine][virtual][failures][cli]") {
  TempDir dir;
  // A trace of zeros draws no time, which option validation cannot see (it reads no draws).
  std::ofstream(dir / "zeros.csv") << "w0[ms]\n0\n0\n";
  const std::string train = kCli +
                            " train --model softmax --clock virtual --workers 2 --rule async "
                            "--no-progress ";
  const std::vector<std::tuple<std::string, std::string, std::string>> cases{
      {"zeros", "--time 2s --delay trace:" + (dir / "zeros.csv").string(),
       "the run stalled: its virtual clock stood at 0 s for 10016 events (iteration 10016); the "
       "delays drew no time"},
      {"flood", "--iterations 20 --delay const:1000s --eval-every 1ms",
       "--eval-every 1ms asks for "},
  };
  for (const auto& [name, args, says] : cases) {
    INFO(args);
    const fs::path out = dir / name;
    const auto r = run_shell(train + args + " --out " + out.string());
    INFO(r.output);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.output, Contains("stalesgd: error: the run stalled: ") && Contains(says));
    CHECK(r.output.find("stalesgd: error:") == r.output.rfind("stalesgd: error:"));
    const auto summary = read_summary(out);
    CHECK(summary["stop_reason"] == "stalled");
    CHECK(summary["status"] == "incomplete");
    CHECK_THAT(summary["error"].get<std::string>(), Contains(says));
    for (const char* file : {"updates.csv", "gradients.csv", "evals.csv", "workers.csv"}) {
      CHECK(fs::exists(out / file));
    }
  }
}

TEST_CASE(
    "virtual watchdog, CLI: SIGTERM ends a long series of snapshots due before one event, "
    "exit 143, outputs written",
    "[engine][virtual][cli]") {
  // The first gradient arrives at 99 s: 99,000 snapshots are due before it (under the maximum),
  // each scored in full, minutes of work. A SIGTERM once the run is under way ends it there.
  TempDir dir;
  const fs::path out = dir / "run";
  const std::string command = kCli +
                              " train --model mlp --clock virtual --iterations 5 --delay "
                              "const:99s --eval-every 1ms --no-progress --out " +
                              out.string();
  // timeout --foreground passes the SIGTERM on to the run once: without it timeout also sends
  // it to its process group, the run among it, and a second signal ends a run at once.
  const auto r =
      run_shell("setsid env --default-signal=TERM timeout --foreground -s KILL 300 " + command +
                " >/dev/null 2>&1 & pid=$!; i=0; while [ ! -e '" + (out / "summary.json").string() +
                "' ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; sleep 1; "
                "kill -TERM $pid; wait $pid; echo $?");
  INFO(r.output);
  CHECK(r.output.find("143") != std::string::npos);
  const auto summary = read_summary(out);
  CHECK(summary["stop_reason"] == "interrupted");
  CHECK(fs::exists(out / "workers.csv"));
}
