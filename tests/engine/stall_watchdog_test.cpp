// StallWatchdog: a version that stays put for the timeout is a stall; any change restarts it.
#include "engine/stall_watchdog.hpp"

#include <catch2/catch.hpp>

using namespace stalesgd;
using Catch::Matchers::Contains;
using std::chrono::milliseconds;

TEST_CASE("stall watchdog: no change of version for the timeout is a stall", "[engine][failures]") {
  const auto t0 = StallWatchdog::Clock::now();
  StallWatchdog dog(2.0, t0);
  CHECK_FALSE(dog.stalled(t0 + milliseconds(1500), 0));
  CHECK(dog.stalled(t0 + milliseconds(2000), 0));
  CHECK_FALSE(dog.stalled(t0 + milliseconds(2100), 1));  // progress restarts the clock
  CHECK_FALSE(dog.stalled(t0 + milliseconds(4000), 1));
  CHECK(dog.stalled(t0 + milliseconds(4500), 1));
  CHECK(dog.message("the server waits for w3") ==
        "the run stalled: no update for 2.4 s (--stall-timeout 2s) at iteration 1; the server "
        "waits for w3; raise --stall-timeout if the delays are this long, or lower "
        "--worker-timeout to run on without hung workers");
  CHECK_THAT(dog.message(""), Contains("at iteration 1; raise"));
  StallWatchdog off(0.0, t0);
  CHECK_FALSE(off.stalled(t0 + std::chrono::hours(1), 0));
}
