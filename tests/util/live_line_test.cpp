// The live progress line in a real terminal (tmux): log lines (-v) and the line never share a row,
// and the line never wraps into piled-up copies, at 60 and at 200 columns.
#include <unistd.h>

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "support/fixtures.hpp"

using namespace stalesgd::test;

TEST_CASE("live line: log lines and the progress line never share a row, and it never wraps",
          "[cli][logging]") {
  REQUIRE(run_shell("command -v tmux").exit_code == 0);  // tools/setup.sh test installs it
  const int columns = GENERATE(60, 200);
  INFO(columns << " columns");
  // One tmux server per generated case: a server told to exit by the previous case may still
  // hold its socket when the next new-session runs (seen on CI as exit 1).
  const std::string socket =
      "stalesgd-test-" + std::to_string(getpid()) + "-" + std::to_string(columns);
  const std::string tmux = "tmux -L " + socket + " ";
  // A real-clock run long enough to be caught while it goes, whose run logger logs each
  // snapshot at debug (-v) while the live line is drawn.
  TempDir dir;
  const std::string run = kCli +
                          " train -v --model softmax --rule async --workers 2 "
                          "--delay exp:mean=5ms --time 4s --eval-every 0.2s --out " +
                          (dir / "run").string() + "; sleep 30";
  const auto started =
      run_shell(tmux + "new-session -d -x " + std::to_string(columns) + " -y 40 '" + run + "'");
  INFO(started.output);
  REQUIRE(started.exit_code == 0);
  // While it goes: wait for the live line, then look twice.
  std::vector<std::string> screens;
  const auto capture = tmux + "capture-pane -p";
  for (int i = 0; i < 100 && screens.size() < 2; ++i) {
    const auto shown = run_shell(capture);
    if (shown.output.find("it/s") != std::string::npos &&
        shown.output.find("debug:") != std::string::npos) {
      screens.push_back(shown.output);
      run_shell("sleep 0.7");
    } else {
      run_shell("sleep 0.1");
    }
  }
  run_shell(tmux + "kill-server");
  REQUIRE(screens.size() == 2);
  for (const auto& screen : screens) {
    INFO(screen);
    int live = 0;
    for (const auto& row : screen_rows(screen)) {
      CHECK(static_cast<int>(row.size()) <= columns);
      const bool is_live = row.find("it/s") != std::string::npos;
      live += is_live ? 1 : 0;
      // A log line starts its row ("[14:07:01] debug: ..."), never glued after the live line
      // ("...staleness 0.00[14:07:01] debug: ...").
      CHECK((row.find("] debug:") == std::string::npos || row.rfind('[', 0) == 0));
    }
    // One live line: no copies left behind by a line that wrapped.
    CHECK(live == 1);
  }
}
