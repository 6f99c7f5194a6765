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
// The server itself (the model, the rule, tickets, failures, checkpoints) is the LockedServer
// shared with the thread engine; this is its transport.
//
// Thread safety: the members marked GUARDED_BY are used under the server's lock, by the receive
// thread and the supervisor's thread; every MPI send of rank 0 happens under it (wire.hpp relies
// on that). remote_ is written by the receive thread alone and read after it is joined.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/locked_server.hpp"
#include "engine/mpi/assignment_sends.hpp"
#include "engine/mpi/wire.hpp"
#include "engine/parameter_store.hpp"
#include "engine/run_context.hpp"
#include "engine/server_transport.hpp"

namespace stalesgd::mpi {

class MpiServer final : public ServerTransport {
 public:
  MpiServer(RunContext& ctx, int ranks);
  Result<RunRecord> run();

  // ServerTransport: the server's decisions as messages (server lock held). Assignments are
  // sent at after_step(), after the step's cancels.
  void assign(const Assignment& a) override;
  void after_step() override;
  void delivered(int w) override;
  void retired(int w) override;
  std::optional<Clock::time_point> due(int w) override;
  void stopped() override;
  std::string where(int w) const override;

 private:
  // The receive thread: pushes until every worker rank has sent its records.
  void receive_main();
  int rank_of(int w) const { return 1 + w / per_rank_; }

  RunContext& ctx_;
  const TrainerOptions& o_;
  const int ranks_;
  const int per_rank_;
  LockedServer server_;

  // GUARDED_BY(server_.mutex()):
  std::vector<ParameterStore::Pin> pins_;  // per worker: the version it computes on (w_tau)
  std::vector<std::uint64_t> pin_ticket_;  // per worker: the minibatch pins_ belongs to
  std::vector<Clock::time_point> due_;     // per worker: when its X ends; max(): none in flight
  std::vector<Assignment> step_;           // this step's assignments, sent at after_step()
  AssignmentSends sends_;                  // declared after server_: it holds pins of its store
  bool stop_sent_ = false;

  std::vector<WorkerRecord> remote_;  // computed, busy, idle as the worker ranks measured them
};

}  // namespace stalesgd::mpi
