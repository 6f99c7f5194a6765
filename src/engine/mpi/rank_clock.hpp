// RankClock: how this rank's steady clock reads against rank 0's, so that a minibatch's delay X
// runs from rank 0's assignment, as in the thread engine (X counts from the server's decision;
// the parameters' way to the worker runs inside it, the gradient's way back adds to it).
//
// On rank 0's host the offset is exactly zero: std::chrono::steady_clock is CLOCK_MONOTONIC,
// one clock for every process of a host. A rank on another host estimates it with ping-pongs
// at start-up (Cristian's method): of several exchanges, the one with the shortest round trip,
// whose error is at most half that round trip (tens of microseconds on a LAN). The ranks take
// turns, and every rank that waits sleeps between polls: with more ranks than cores, ranks
// spinning in MPI while others measure put the exchanges on the scheduler's 4 ms tick (offsets
// 2-10 ms off were seen), and only the shortest round trips are kept.
//
// Thread safety: estimate() is collective (every rank calls it, once, before its workers
// start); the results are plain values.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace stalesgd::mpi {

// What rank 0 learns of a rank at start-up: its host and how its clock reads against rank 0's.
struct RankPlace {
  std::string host;
  std::chrono::nanoseconds offset{0};  // its steady clock minus rank 0's
  std::chrono::nanoseconds error{0};   // |true offset - offset| <= error; 0: same host, exact
  bool estimated = false;              // by ping-pong (another host, or STALESGD_MPI_CLOCK)
};

struct RankClock {
  // This rank's steady clock minus rank 0's; zero on rank 0 and on its host.
  std::chrono::nanoseconds offset{0};
  // How far off `offset` may be: half the best round trip; zero when not estimated.
  std::chrono::nanoseconds error{0};

  // Collective over MPI_COMM_WORLD. Returns this rank's clock; on rank 0 `places` (when given)
  // gets every rank's, rank 0's own first.
  static RankClock estimate(std::vector<RankPlace>* places = nullptr);

  // Rank 0's time point `rank0_ns` (its steady clock, in ns since its epoch) on this rank's clock.
  std::chrono::steady_clock::time_point from_rank0(std::int64_t rank0_ns) const {
    return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(rank0_ns) + offset);
  }
};

}  // namespace stalesgd::mpi
