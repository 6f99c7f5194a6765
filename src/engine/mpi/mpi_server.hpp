// MpiServer: rank 0 of --engine mpi, the LockedServer's transport across processes. The server
// itself (the model, the rule through ServerCore, tickets, delays, failed workers, checkpoints)
// is the one the thread engine uses; this carries out its decisions by messages: an assignment
// (ticket, X, version and the parameters, one message) to every worker a step starts, after a
// cancel to every worker it cut, and kStop at the end. A receive thread takes what the worker
// ranks send (pushes, crash notices, their records at the end); the caller's thread runs the
// RunSupervisor's loop.
//
// In the field nothing here waits on one rank (docs/distributed.md, "Faults"): every send is an
// MPI_Isend through the Outbox (one slow rank holds back only its own messages), receives stay
// posted for every rank at once (PostedReceives), and the end of the run waits a bounded time
// for the ranks' answers. A rank that stops answering is found by the server's --worker-timeout
// watch like a hung thread (its workers retired), the RankRoster records its silences, and a
// rank that never answers the end is named in the record and makes the job end without
// MPI_Finalize (mpi::end_without_finalize).
//
// Thread safety: the members marked GUARDED_BY(server) are used under the LockedServer's lock,
// by the receive thread and the supervisor's thread; every MPI send of rank 0 happens under it.
// roster_ and remote_ belong to the receive thread while it runs and to the caller's before and
// after.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/locked_server.hpp"
#include "engine/mpi/outbox.hpp"
#include "engine/mpi/posted_receives.hpp"
#include "engine/mpi/rank_roster.hpp"
#include "engine/mpi/wire.hpp"
#include "engine/parameter_store.hpp"
#include "engine/run_context.hpp"
#include "engine/server_transport.hpp"

namespace stalesgd::mpi {

class MpiServer final : public ServerTransport {
 public:
  MpiServer(RunContext& ctx, int ranks);
  Result<RunRecord> run();
  // After run(): every worker rank answered the end of the run. If not, MPI may still read
  // this object's buffers for a send to a rank that stopped reading: the caller keeps it alive
  // until the process ends.
  bool all_answered() const { return roster_ && roster_->all_answered(); }

  // ServerTransport: the server's decisions as messages (server lock held). A step's
  // assignments go out at after_step(), after its cancels.
  void assign(const Assignment& a) override;
  void after_step() override;
  void delivered(int w) override;
  void retired(int w) override;
  std::optional<Clock::time_point> due(int w) override;
  void stopped() override;
  std::string where(int w) const override;

 private:
  // The receive thread: what the worker ranks send, until every rank answered the end or the
  // wait for them is over.
  void receive_main();
  void take(const PostedReceives::Arrival& a, PostedReceives& in, Clock::time_point now);
  // Each rank's earliest minibatch due, for its silences. REQUIRES(server)
  void check_silences(Clock::time_point now);
  int rank_of(int w) const { return 1 + w / per_rank_; }

  RunContext& ctx_;
  const int ranks_;
  const int per_rank_;
  LockedServer server_;

  // GUARDED_BY(server):
  std::vector<ParameterStore::Pin> pins_;  // per worker: the version it computes on (w_tau)
  std::vector<std::uint64_t> pin_ticket_;  // per worker: the minibatch pins_ belongs to
  std::vector<Clock::time_point> due_;     // per worker: when its X ends; max(): none in flight
  std::vector<Assignment> step_;           // this step's assignments, sent at after_step()
  Outbox outbox_;                          // declared after server_: it holds pins of its store
  std::optional<Clock::time_point> stopped_at_;  // when kStop went out

  std::optional<RankRoster> roster_;  // set by run() once the clocks are known
  std::vector<WorkerRecord> remote_;  // computed, busy, idle as the worker ranks measured them
};

}  // namespace stalesgd::mpi
