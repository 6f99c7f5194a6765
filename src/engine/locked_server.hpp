// LockedServer: the parameter server of every real-clock engine that has one (threads, MPI
// ranks): the model's parameters (ParameterStore), the rule (ServerCore and its RoundProtocol),
// every worker's minibatch (its ticket, when it was assigned, its delay X), the stop reason,
// failed workers and checkpoints, behind one lock. An engine supplies its ServerTransport and
// brings each push to serve(); it never interprets a rule's decision itself.
//
// The server is the authority on what every worker does: whenever a worker becomes free (its
// push handled, its minibatch cut) the server assigns it its next minibatch by drawing its
// delay X (one DelaySampler per worker, seeded alike in every engine) and numbering it with a
// new ticket. A push carries its minibatch's ticket: one whose minibatch an update has cut since
// is dropped, so a rule's cuts are exact however late the push arrives.
//
// Failed workers (docs/rules.md, "Failed workers"): retire() takes a worker out (a crash, told
// by the engine; a hang, found by watch() --worker-timeout after its gradient was due); the run
// goes on where the rule allows, else stops with kWorkersFailed. An exception in any of the
// engine's threads goes to fail_thread() and ends the run as kFailed.
//
// Thread safety: everything below mu_ is GUARDED_BY(mu_), except that the store also serves
// pins to workers through its own lock-free path. serve(), retire() and request_stop() require
// the caller to hold mutex(); the SupervisedEngine methods, begin(), fail_thread() take it.
// Lock order: mu_, then whatever the transport takes.
#pragma once

#include <condition_variable>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/caught_failure.hpp"
#include "engine/parameter_store.hpp"
#include "engine/run_context.hpp"
#include "engine/run_supervisor.hpp"
#include "engine/server_core.hpp"
#include "engine/server_transport.hpp"
#include "stalesgd/straggler/profile.hpp"
#include "stalesgd/straggler/time_limit.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {

class LockedServer final : public SupervisedEngine {
 public:
  // `buffers`: the store's capacity (versions pinned at once); `engine`: the checkpoint's tag.
  LockedServer(RunContext& ctx, ServerTransport& transport, std::size_t buffers,
               std::string_view engine);

  // Before the run: the supervisor to ask, and --resume restored. Returns the run's clock to go
  // on from (0 for a fresh run).
  Result<double> prepare(RunSupervisor& supervisor);
  // The run's clock reads 0 at `start` (a resumed run's lies back by its time); every worker's
  // first minibatch is assigned at `now`.
  void begin(Clock::time_point start, Clock::time_point now);
  // RunSupervisor::supervise with this server; an exception there ends the run as kFailed.
  std::pair<StopReason, double> supervise();
  // After every thread of the engine is joined: the record, with each worker's computed, busy
  // and idle from `measured` (the engine's) and its counts from the server.
  Result<RunRecord> finish(StopReason reason, double wall_s, std::vector<WorkerRecord> measured);

  // A gradient as it reaches the server.
  struct Push {
    int worker = 0;
    std::uint64_t ticket = 0;
    float loss = 0.0f;
    Clock::time_point at;           // when it arrived
    std::uint64_t version = 0;      // computed on
    std::span<const float> params;  // w_tau, read during serve() only
    std::span<const float> grad;    // read during serve() only
  };
  std::mutex& mutex() { return mu_; }
  // The server's step for a push. REQUIRES(mutex())
  void serve(const Push& push);
  // Worker w failed, found at `at`. REQUIRES(mutex())
  void retire(int w, Clock::time_point at, FailureKind how);
  // Ends the run (the first reason wins) and wakes the supervisor. REQUIRES(mutex())
  void request_stop(StopReason reason);
  bool stopping() const { return stop_reason_ != StopReason::kNone; }  // REQUIRES(mutex())
  // An exception in one of the run's threads ends the run with kFailed and its line; its
  // detail (a TorchScript traceback) goes to the run's log at debug level (run.log; -v). Takes
  // the lock.
  void fail_thread(const CaughtFailure& failure);

  ParameterStore& store() { return store_; }
  const RoundProtocol& protocol() const { return core_.protocol(); }
  const ServerCore& core() const { return core_; }  // REQUIRES(mutex())
  RunRecord& record() { return run_; }              // REQUIRES(mutex())
  // The seed of the delay and minibatch streams: the run's, or for a resumed run one mixed with
  // the checkpoint's version, so that it does not replay the streams from their start.
  std::uint64_t stream_seed() const { return stream_seed_; }
  double since_start(Clock::time_point t) const {
    return std::chrono::duration<double>(t - start_).count();
  }
  // When worker w's latest minibatch was assigned and its X. REQUIRES(mutex())
  Clock::time_point assigned_at(int w) const { return assigned_at_[ix(w)]; }

  // SupervisedEngine: the supervisor's loop, on the caller's thread.
  StopReason wait_until(Clock::time_point deadline) override;
  void inspect(const Look& look) override;
  StopReason stop(StopReason reason) override;
  double mean_staleness() override;
  // The parameters, the server's counts and rule, then the transport's part; a resumed run
  // starts a new round with every worker on the checkpoint's version (docs/reliability.md).
  void save(StateWriter& out, const Look& look) override;
  void watch(Clock::time_point now) override;
  std::string stuck() override;

 private:
  static std::size_t ix(int w) { return static_cast<std::size_t>(w); }
  // Worker w's next minibatch, starting at `at`. REQUIRES(mu_)
  void assign(int w, Clock::time_point at, bool cut);
  // Carries out a step's starts, then the budgets. REQUIRES(mu_)
  void carry_out(const ServerCore::Outcome& outcome, Clock::time_point at);
  void seed_delays(std::uint64_t seed);

  RunContext& ctx_;
  const TrainerOptions& o_;
  ServerTransport& transport_;
  const std::string engine_;
  RunSupervisor* supervisor_ = nullptr;  // set by prepare(); its stop_due() is safe from any thread
  Clock::time_point start_;              // written by begin() before any push
  std::uint64_t stream_seed_;

  std::mutex mu_;
  std::condition_variable supervisor_cv_;  // wakes the supervisor when stop_reason_ is set
  RunRecord run_;
  ParameterStore store_;
  ServerCore core_;
  std::vector<DelaySampler> delays_of_;         // per worker: X is drawn at the assignment
  std::vector<std::uint64_t> ticket_;           // per worker: its latest minibatch
  std::vector<Clock::time_point> assigned_at_;  // per worker: when that one was assigned
  std::vector<Clock::duration> x_;              // per worker: its X
  std::vector<Attempts> attempts_;              // per worker: X's attempts (a time limit's)
  Clock::time_point last_push_;                 // the latest push handled: records stay in order
  StopReason stop_reason_ = StopReason::kNone;  // set: the run is over, pushes are dropped
  // The first exception of any thread, as the run's stop message. It ends the run as kFailed
  // whatever stopped it first: a bug is never passed off as a result.
  std::string thread_failure_;
  FailureCause failure_cause_ = FailureCause::kBug;  // GUARDED_BY(mu_): thread_failure_'s
};

}  // namespace stalesgd
