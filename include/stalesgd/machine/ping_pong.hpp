// A link from a ping-pong curve (docs/machine.md, "Calibration"): `stalesgd calibrate` under
// mpirun times round trips between ranks 0 and 1 for messages from one float to the model's
// parameters, and the machine file's link is the line through that curve.
#pragma once

#include <span>

#include "stalesgd/machine/machine.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

struct PingPongPoint {
  double bytes = 0.0;         // one message
  double round_trip_s = 0.0;  // there and back: the median of the timed round trips
};

// One way is latency + 8 bytes / bandwidth: the latency from the smallest message (its half
// round trip less its bytes' share), the bandwidth from the slope between the smallest and the
// largest, which the model's messages are. `memory`: the ranks share a host, so a message is a
// copy on its cores (Link::memory). When the round trip does not grow with the size (a machine
// so busy that scheduling, not the link, sets every round trip) the link is that latency alone,
// with no bandwidth limit. An Error without two sizes.
Result<Link> fit_link(std::span<const PingPongPoint> points, bool memory);

}  // namespace stalesgd
