// fit_link: a link from a ping-pong curve (why: stalesgd/machine/ping_pong.hpp).
#include "stalesgd/machine/ping_pong.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace stalesgd {

Result<Link> fit_link(std::span<const PingPongPoint> points, bool memory) {
  if (points.size() < 2) return Error{"a ping-pong curve needs at least two message sizes"};
  const auto by_size = [](const PingPongPoint& a, const PingPongPoint& b) {
    return a.bytes < b.bytes;
  };
  const PingPongPoint small = *std::min_element(points.begin(), points.end(), by_size);
  const PingPongPoint large = *std::max_element(points.begin(), points.end(), by_size);
  if (!(large.bytes > small.bytes)) {
    return Error{"a ping-pong curve needs at least two message sizes"};
  }
  const double rise = (large.round_trip_s - small.round_trip_s) / 2.0;
  Link link;
  link.memory = memory;
  if (!(rise > 0.0) || !std::isfinite(rise)) {
    link.latency_s = std::max(0.0, small.round_trip_s / 2.0);
    return link;  // flat: latency only
  }
  link.bandwidth_bps = 8.0 * (large.bytes - small.bytes) / rise;
  link.latency_s = std::max(0.0, small.round_trip_s / 2.0 - 8.0 * small.bytes / link.bandwidth_bps);
  return link;
}

}  // namespace stalesgd
