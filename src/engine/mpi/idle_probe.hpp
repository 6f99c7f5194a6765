// Waiting for the next MPI message without burning a core.
//
// Open MPI's blocking MPI_Probe and MPI_Recv spin in its progress engine while they wait:
// measured here, a rank blocked 2 s in MPI_Recv used 1.4 s of CPU, which on a 2-core machine
// would be taken from the gradients. A receive thread is idle most of a run (between a
// worker's minibatches), so it polls with MPI_Improbe and sleeps between polls: 10 us after a
// message, doubling to at most 200 us while nothing comes. That costs about 5,000 wake-ups a
// second when idle and adds at most 200 us (on average less than half) to a message's delivery;
// once matched, a message is received with a blocking MPI_Mrecv (it is already there). When
// messages come faster than one per 300 us on average (runs without injected delay), a sleep
// (40 us at the least here) would outlast the gap, so it polls without sleeping for twice the
// average gap after each message: softmax without delay, 2 worker ranks, 0.27 -> 0.48 of the
// bound (benchmarks/mpi_engine.sh); runs with millisecond delays never reach that rate.
//
// Thread safety: not thread-safe; each receive thread keeps its own IdleProbe.
#pragma once

#include <mpi.h>

#include <chrono>

namespace stalesgd::mpi {

class IdleProbe {
 public:
  using Clock = std::chrono::steady_clock;

  // Blocks until a message from `source` (or MPI_ANY_SOURCE) with any tag is there; returns it
  // matched, for MPI_Mrecv, and its status (source, tag, size). `expected`: when the caller
  // knows a message is due (rank 0 knows when each minibatch's X ends), no sleep runs past it,
  // and from then on it polls every 10 us for up to 1 ms, so the message is taken at once.
  MPI_Message next(int source, MPI_Status& status,
                   Clock::time_point expected = Clock::time_point::max());

 private:
  std::chrono::microseconds pause_{10};
  Clock::time_point last_{};                      // the last message
  Clock::duration gap_{std::chrono::seconds(1)};  // mean gap between messages, weight 1/8
};

// Waits until `request` completes, testing it every `pause` instead of MPI_Wait, which spins a
// core like MPI_Recv. For waits that are rare or expected to be short.
void wait_quietly(MPI_Request& request, std::chrono::microseconds pause);

}  // namespace stalesgd::mpi
