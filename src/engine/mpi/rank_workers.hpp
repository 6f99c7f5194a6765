// RankWorkers: a worker rank of --engine mpi: W worker threads (each the WorkerLoop the thread
// engine's workers run, engine/worker_loop.hpp, on a port of messages), global workers
// (rank - 1) * W + l, and the rank's main thread as its receive thread, which keeps receives
// posted for rank 0's messages, puts each assignment into its worker's RemoteSlot, wakes a
// worker whose minibatch is cut (asleep or in the middle of its gradient, at once) and, at
// kStop, stops and joins the workers and sends rank 0 their records. A worker sleeps first and
// computes last, as in the thread engine (pad: it starts its gradient about a gradient's time
// before X, so the minibatch ends at max(C, X); add: it sleeps X, then computes), then pushes
// its gradient to rank 0. The minibatch's delay runs from rank 0's assignment (on this rank's
// clock through RankClock), as in the thread engine: the parameters' transfer runs inside X,
// the push's adds to it.
//
// --fail (docs/rules.md, "Failed workers"): a worker thread made to crash tells rank 0 (kFailed)
// and ends; one made to hang blocks until the run ends. A whole rank made to crash is killed
// (SIGKILL, as `kill -9` would) and one made to hang is stopped (SIGSTOP), by its receive thread
// at the failure's time.
//
// Thread safety: slots_ is shared as RemoteSlot says; the rest is the receive thread's, or
// constant while the worker threads run. Worker threads send with MPI concurrently
// (MPI_THREAD_MULTIPLE).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/mpi/posted_receives.hpp"
#include "engine/mpi/rank_clock.hpp"
#include "engine/mpi/remote_slot.hpp"
#include "engine/mpi/wire.hpp"
#include "engine/run_context.hpp"

namespace stalesgd::mpi {

class RankWorkers {
 public:
  RankWorkers(RunContext& ctx, int rank);
  // Runs this rank's part of the run, from the clocks' estimate to the records sent.
  void run();

 private:
  class SlotPort;  // rank_workers.cpp: a worker's side of the messages, for WorkerLoop
  void receive_loop();
  // One message from rank 0; false at kStop.
  bool take(const PostedReceives::Arrival& a, PostedReceives& in);
  // The shared WorkerLoop (engine/worker_loop.hpp) on worker `local`'s SlotPort.
  void worker_main(int local);
  // --fail for worker w at `fail_at`: a crash tells rank 0 and returns; a hang blocks until the
  // run stops.
  void fail_worker(RemoteSlot& slot, int w, FailureKind how);
  void stop_workers();
  void send_records();
  // Sends a header-only message to rank 0 and waits for it without spinning.
  void send_quietly(Packet& p, int bytes, int tag);

  RunContext& ctx_;
  const TrainerOptions& o_;
  const int rank_;
  const int per_rank_;
  const int first_;  // the global index of local worker 0
  std::vector<RemoteSlot> slots_;
  RankClock clock_;                // set before the workers start
  EngineClock::time_point start_;  // the run's time zero on this rank's clock; likewise
  std::uint64_t stream_seed_ = 0;  // the minibatch streams' seed (rank 0's); likewise
  // The receive thread's: a kAssign whose kParams, the next message, is still to come.
  Header assignment_;
  bool assigning_ = false;
};

}  // namespace stalesgd::mpi
