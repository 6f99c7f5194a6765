// fit_link (stalesgd/machine/ping_pong.hpp): the link through a ping-pong curve, and the curves
// it refuses.
#include "stalesgd/machine/ping_pong.hpp"

#include <catch2/catch.hpp>
#include <vector>

using namespace stalesgd;
using Catch::Matchers::Contains;

TEST_CASE("ping-pong: the link through the curve's smallest and largest messages",
          "[machine][ping-pong]") {
  // One way 2 us + bytes at 8 Gbit/s (1 ns a byte); the middle point is off the line and
  // does not move the fit.
  std::vector<PingPongPoint> curve{{1024.0, 2 * (2e-6 + 1024e-9)},
                                   {4.0, 2 * (2e-6 + 4e-9)},
                                   {64e3, 1.0},
                                   {4e5, 2 * (2e-6 + 4e-4)}};
  auto link = fit_link(curve, true);
  REQUIRE(link.ok());
  CHECK(link->latency_s == Approx(2e-6).epsilon(1e-9));
  CHECK(link->bandwidth_bps == Approx(8e9).epsilon(1e-9));
  CHECK(link->memory);
  CHECK(link->seconds(4e5) == Approx(2e-6 + 4e-4).epsilon(1e-9));
  CHECK_FALSE(fit_link(curve, false)->memory);
}

TEST_CASE("ping-pong: one size is refused, and a flat curve is a latency alone",
          "[machine][ping-pong]") {
  std::vector<PingPongPoint> one{{4.0, 1e-6}};
  CHECK_THAT(fit_link(one, true).error().message, Contains("at least two message sizes"));
  std::vector<PingPongPoint> same{{4.0, 1e-6}, {4.0, 2e-6}};
  CHECK_THAT(fit_link(same, true).error().message, Contains("at least two message sizes"));
  // A busy machine: scheduling sets every round trip, the size none.
  std::vector<PingPongPoint> flat{{4.0, 4e-3}, {4e5, 3e-3}};
  auto link = fit_link(flat, false);
  REQUIRE(link.ok());
  CHECK(link->latency_s == Approx(2e-3));
  CHECK(link->bandwidth_bps == 0.0);  // no limit
  CHECK_FALSE(link->memory);
}
