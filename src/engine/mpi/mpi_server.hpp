// MpiServer: rank 0 of --engine mpi. It owns the model's parameters and the rule (through
// ServerCore and its RoundProtocol), exactly as the thread engine's server, and carries out
// each Step by sending messages: an assignment (ticket, X, version, parameters) to every
// worker the step starts, after a cancel to every worker it cut. A receive thread takes the
// pushes and runs the server step for each; the caller's thread runs the RunSupervisor's loop.
//
// The server draws every minibatch's delay X at its assignment, with one DelaySampler per
// worker seeded as the thread engine's, and pins the version it sends, so that the gradient's
// w_tau is at hand when it returns (for the staleness-distance learning rates). A push carries
// its minibatch's ticket: one whose minibatch was cut since (the worker was given a newer
// ticket) is dropped, so a rule's cuts are exact however late the cancel arrives.
//
// Thread safety: every member below mu_ is GUARDED_BY(mu_) and used by the receive thread and
// the supervisor's thread under it; every MPI send of rank 0 happens under it (wire.hpp relies
// on that). remote_ is written by the receive thread alone and read after it is joined.
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/mpi/assignment_sends.hpp"
#include "engine/mpi/wire.hpp"
#include "engine/parameter_store.hpp"
#include "engine/run_context.hpp"
#include "engine/run_supervisor.hpp"
#include "engine/server_core.hpp"
#include "stalesgd/straggler/profile.hpp"

namespace stalesgd::mpi {

class MpiServer final : public SupervisedEngine {
 public:
  MpiServer(RunContext& ctx, int ranks);
  Result<RunRecord> run();

  // SupervisedEngine: the supervisor's loop, on the caller's thread.
  StopReason wait_until(Clock::time_point deadline) override;
  void inspect(const Look& look) override;
  StopReason stop(StopReason reason) override;
  double mean_staleness() override;
  // As the thread engine's: parameters, version, the server's counts and rule. The worker
  // ranks' computed/busy/idle are theirs and reach rank 0 only at the end, so a resumed run's
  // count from the resume (docs/reliability.md).
  void save(StateWriter& out, const Look& look) override;

 private:
  // --resume: restores what save() wrote; returns the run's clock at the checkpoint.
  Result<double> resume(RunSupervisor& supervisor, const std::string& payload);
  // The receive thread: pushes until every worker rank has sent its records.
  void receive_main();
  // The server's step for one push. REQUIRES(mu_)
  void serve(const Packet& push, Clock::time_point at);
  // Worker w's next minibatch, assigned at `at` (its X runs from there). REQUIRES(mu_)
  void assign(int w, Clock::time_point at);
  // Tells worker w's rank that its minibatch in flight is cut. REQUIRES(mu_)
  void cancel(int w);
  // The earliest end of X of a minibatch in flight, for the receive thread's probe. REQUIRES(mu_)
  Clock::time_point next_due() const;
  // The first reason wins; wakes the supervisor. REQUIRES(mu_)
  void request_stop(StopReason reason);
  int rank_of(int w) const { return 1 + w / per_rank_; }
  double since_start(Clock::time_point t) const {
    return std::chrono::duration<double>(t - start_).count();
  }

  RunContext& ctx_;
  const TrainerOptions& o_;
  const int ranks_;
  const int per_rank_;
  RunSupervisor* supervisor_ = nullptr;  // set by run(); its stop_due() is safe from any thread
  Clock::time_point start_;              // set by run() before the receive thread starts

  std::mutex mu_;
  std::condition_variable stop_cv_;  // wakes the supervisor when stop_reason_ is set
  RunRecord run_;
  ParameterStore store_;
  ServerCore core_;
  std::vector<DelaySampler> delays_of_;    // per worker: X is drawn at the assignment
  std::vector<std::uint64_t> ticket_;      // per worker: its latest assignment's ticket
  std::vector<ParameterStore::Pin> pins_;  // per worker: the version it computes on (w_tau)
  std::vector<Clock::time_point> due_;     // per worker: when its X ends; max(): none in flight
  std::vector<Clock::time_point> assigned_at_;  // per worker: its latest assignment's time
  AssignmentSends sends_;                       // declared after store_: it holds pins of it
  StopReason stop_reason_ = StopReason::kNone;
  bool stop_sent_ = false;

  std::vector<WorkerRecord> remote_;  // computed, busy, idle as the worker ranks measured them
};

}  // namespace stalesgd::mpi
