// Waiting for MPI without burning a core.
//
// Open MPI's blocking calls (MPI_Recv, MPI_Wait, MPI_Probe) spin in its progress engine while
// they wait: measured here, a rank blocked 2 s in MPI_Recv used 1.4 s of CPU, which on a 2-core
// machine would be taken from the gradients. A receive thread is idle most of a run (between a
// worker's minibatches), so it polls its posted receives and sleeps between polls: 10 us after a
// message, doubling to at most 200 us while nothing comes. That costs about 5,000 wake-ups a
// second when idle and adds at most 200 us (on average less than half) to a message's delivery.
// When messages come faster than one per 300 us on average (runs without injected delay), a
// sleep (40 us at the least here) would outlast the gap, so it polls without sleeping for twice
// the average gap after each message: softmax without delay, 2 worker ranks, 0.27 -> 0.48 of the
// bound (benchmarks/mpi_engine.sh); runs with millisecond delays never reach that rate.
//
// Thread safety: not thread-safe; each receive thread keeps its own IdleWait.
#pragma once

#include <mpi.h>

#include <chrono>
#include <thread>

namespace stalesgd::mpi {

class IdleWait {
 public:
  using Clock = std::chrono::steady_clock;

  // Calls `poll` (true: something came) until it says so or `deadline` passes; returns whether
  // it did. `expected`: when the caller knows a message is due (rank 0 knows when each
  // minibatch's X ends), no sleep runs past it, and from then on it polls every 10 us for up to
  // 1 ms, so the message is taken at once.
  template <class Poll>
  bool until(Poll&& poll, Clock::time_point deadline,
             Clock::time_point expected = Clock::time_point::max()) {
    for (;;) {
      if (poll()) {
        found(Clock::now());
        return true;
      }
      const auto now = Clock::now();
      if (now >= deadline) return false;
      const auto pause = next_pause(now, expected);
      if (pause > Clock::duration::zero())
        std::this_thread::sleep_for(std::min(pause, deadline - now));
    }
  }

 private:
  // How long to sleep before the next poll; zero: poll again at once (busy).
  Clock::duration next_pause(Clock::time_point now, Clock::time_point expected);
  void found(Clock::time_point now);

  std::chrono::microseconds pause_{10};
  Clock::time_point last_{};                      // the last message
  Clock::duration gap_{std::chrono::seconds(1)};  // mean gap between messages, weight 1/8
};

// Waits until `request` completes, testing it every `pause` instead of MPI_Wait, which spins a
// core like MPI_Recv. For waits that are rare or expected to be short.
void wait_quietly(MPI_Request& request, std::chrono::microseconds pause);
// The same with a deadline; false when it passed first (the request is still pending).
bool wait_quietly_until(MPI_Request& request, std::chrono::microseconds pause,
                        std::chrono::steady_clock::time_point deadline);

}  // namespace stalesgd::mpi
