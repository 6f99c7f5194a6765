// RankWorkers: a worker rank of --engine mpi: W worker threads, global workers
// (rank - 1) * W + l, and the rank's main thread as its receive thread, which puts each
// assignment from rank 0 into its worker's RemoteSlot, wakes a worker whose minibatch is cut
// (asleep or in the middle of its gradient, at once) and, at kStop, stops and joins the
// workers and sends rank 0 their records. A worker sleeps first and computes last, as in the
// thread engine (pad: it starts its gradient about a gradient's time before X, so the minibatch
// ends at max(C, X); add: it sleeps X, then computes), then pushes its gradient to rank 0.
// The minibatch's delay runs from rank 0's assignment (on this rank's clock through RankClock),
// as in the thread engine: the parameters' transfer runs inside X, the push's adds to it.
//
// Thread safety: slots_ is shared as RemoteSlot says; the rest is the receive thread's, or
// constant while the worker threads run. Worker threads send with MPI concurrently
// (MPI_THREAD_MULTIPLE).
#pragma once

#include <memory>
#include <vector>

#include "engine/mpi/rank_clock.hpp"
#include "engine/mpi/remote_slot.hpp"
#include "engine/run_context.hpp"

namespace stalesgd::mpi {

class RankWorkers {
 public:
  RankWorkers(RunContext& ctx, int rank);
  // Runs this rank's part of the run, from the start barrier to the records sent.
  void run();

 private:
  enum class Woken { kOnTime, kCancelled, kStopped };
  void receive_loop();
  void worker_main(int local);
  void worker_loop(int local);
  Woken sleep_until(RemoteSlot& slot, EngineClock::time_point until);
  void stop_workers();
  void send_records();

  RunContext& ctx_;
  const TrainerOptions& o_;
  const int per_rank_;
  const int first_;  // the global index of local worker 0
  std::vector<RemoteSlot> slots_;
  RankClock clock_;  // set before the start barrier; read by the receive thread only
};

}  // namespace stalesgd::mpi
