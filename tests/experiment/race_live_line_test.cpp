// race --jobs 2 in a real terminal (tmux): one live line for the runs going, with the race's
// ETA, never glued to the lines of ended runs, which print in the order the runs started.
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "support/fixtures.hpp"
#include "support/sanitized.hpp"

using namespace stalesgd::test;

TEST_CASE("race --jobs 2 on a terminal: one live line, ended runs in the order they started",
          "[race][progress][cli]") {
  REQUIRE(run_shell("command -v tmux").exit_code == 0);  // tools/setup.sh test installs it
  TempDir dir;
  // Virtual-clock runs (they share the machine); the first runs longest, so the second ends
  // before it and must wait to be printed. Under a sanitizer each is half as long (the race took
  // 90 s under ThreadSanitizer), in the same proportions.
  std::ofstream(dir / "race.toml")
      << ("model = \"softmax\"\nworkers = 2\nclock = \"virtual\"\n"
          "delay = \"exp:mean=5ms\"\neval_samples = 500\n"
          "[[run]]\nlabel = \"long async\"\nrule = \"async\"\ntime = \"" +
          std::string(kSanitized ? "30s" : "300s") +
          "\"\n"
          "[[run]]\nlabel = \"short sync\"\nrule = \"sync\"\ntime = \"" +
          std::string(kSanitized ? "5s" : "10s") +
          "\"\n"
          "[[run]]\nlabel = \"k-async\"\nrule = \"k-async\"\nk = 1\ntime = \"" +
          std::string(kSanitized ? "15s" : "30s") + "\"\n");
  const std::string socket = "stalesgd-race-" + std::to_string(getpid());
  const std::string tmux = "tmux -L " + socket + " ";
  const std::string race = kCli + " race --config " + (dir / "race.toml").string() +
                           " --jobs 2 --out " + (dir / "out").string() + "; echo race-ended" +
                           "; sleep 60";
  const auto started = run_shell(tmux + "new-session -d -x 100 -y 40 '" + race + "'");
  INFO(started.output);
  REQUIRE(started.exit_code == 0);
  std::vector<std::string> live;  // the live rows seen while the race went
  std::string last;
  // Until the race ends, within the test's timeout: under a sanitizer on a loaded machine the
  // race alone takes minutes (a count of polls ran out there while it was still going).
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(kSanitized ? 1000 : 250);
  while (std::chrono::steady_clock::now() < deadline) {
    last = run_shell(tmux + "capture-pane -p").output;
    if (last.find("race-ended") != std::string::npos) break;
    for (const auto& row : screen_rows(last)) {
      if (row.find(" done") != std::string::npos) live.push_back(row);
    }
    run_shell("sleep 0.05");
  }
  run_shell(tmux + "kill-server");
  INFO(last);
  REQUIRE(last.find("race-ended") != std::string::npos);
  REQUIRE_FALSE(live.empty());
  bool two_going = false, eta = false;
  for (const auto& row : live) {
    INFO(row);
    CHECK(row.rfind('[', 0) == 0);  // starts its row: "[1/3 done, race ETA 0:04]  ..."
    CHECK(row.size() <= 100);       // cut to the terminal's width
    CHECK(row.find("] long async") == std::string::npos);  // never glued to an ended run's line
    two_going =
        two_going ||
        (row.find("long async") != std::string::npos &&
         (row.find("short sync") != std::string::npos || row.find("k-async") != std::string::npos));
    eta = eta || row.find("race ETA ") != std::string::npos;
  }
  CHECK(two_going);
  CHECK(eta);
  // At the end: no live line left, and the runs in the order they started.
  const auto at = [&](const std::string& text) { return last.find(text); };
  CHECK(at(" done") == std::string::npos);
  REQUIRE(at("[1/3] long async") != std::string::npos);
  REQUIRE(at("[2/3] short sync") != std::string::npos);
  REQUIRE(at("[3/3] k-async") != std::string::npos);
  CHECK(at("[1/3] long async") < at("[2/3] short sync"));
  CHECK(at("[2/3] short sync") < at("[3/3] k-async"));
  for (const auto& row : screen_rows(last)) {
    if (row.find("/3] ") != std::string::npos) CHECK(row.rfind("[", 0) == 0);
  }
}
