// RankClock: how this rank's steady clock reads against rank 0's, so that a minibatch's delay X
// runs from rank 0's assignment, as in the thread engine (X counts from the server's decision;
// the parameters' way to the worker runs inside it, the gradient's way back adds to it).
//
// On rank 0's host the offset is exactly zero: std::chrono::steady_clock is CLOCK_MONOTONIC,
// one clock for every process of a host. A rank on another host estimates it with ping-pongs
// at start-up (Cristian's method): of several exchanges, the one with the shortest round trip,
// whose error is at most half that round trip (tens of microseconds on a LAN).
//
// Thread safety: estimate() is collective (every rank calls it, once, before the workers start);
// the result is a plain value.
#pragma once

#include <chrono>
#include <cstdint>

namespace stalesgd::mpi {

struct RankClock {
  // This rank's steady clock minus rank 0's; zero on rank 0 and on its host.
  std::chrono::nanoseconds offset{0};
  // How far off `offset` may be: half the best round trip; zero when not estimated.
  std::chrono::nanoseconds error{0};

  // Collective over MPI_COMM_WORLD.
  static RankClock estimate();

  // Rank 0's time point `rank0_ns` (its steady clock, in ns since its epoch) on this rank's clock.
  std::chrono::steady_clock::time_point from_rank0(std::int64_t rank0_ns) const {
    return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(rank0_ns) + offset);
  }
};

}  // namespace stalesgd::mpi
