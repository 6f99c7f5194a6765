// ThreadEngine: the real-thread engine. P worker threads with real sleeps for the injected
// delays, and the server: the model, the rule (through ServerCore and its RoundProtocol) and
// every assignment, behind one lock. The caller's thread runs the RunSupervisor's loop.
//
// Server placement (--server):
// - inline: a worker that finishes a minibatch takes the server lock and runs the server's step
//   itself, then goes on. Updates are still applied one at a time in one total order by a
//   single logical owner of the parameters, exactly as by a server thread; what is saved is two
//   cross-core wake-ups per gradient, which on a 2-core machine cost more CPU than a softmax
//   gradient (docs/performance.md, "Parameter-server overhead").
// - thread: a dedicated server thread owns the step; workers push (worker, ticket, loss) on a
//   oneTBB concurrent queue and never take the server lock: they read the versions the server
//   pinned for them through the lock-free ParameterStore.
//
// The server is the authority on what every worker does: whenever a worker becomes free (its
// push handled, its wait released, its minibatch cut) the server assigns it its next minibatch
// by drawing its delay X and pinning the current version for it (see WakePolicy for when). A
// worker that wakes a little late still computes on the version the rule gave it, and a rule's
// cuts are exact: an update cuts every assigned minibatch on an older version, started or not.
// Every minibatch one push frees starts at that push's time, as in the theory, where the server
// takes no time. A worker sleeps first and computes last (pad: it wakes about a gradient's time
// before X, so the minibatch ends at max(C, X); add: it sleeps X, then computes): a minibatch
// cut while its worker sleeps costs no gradient.
//
// Failed workers (--fail; docs/rules.md, "Failed workers"; thread_failures.cpp): a worker made
// to crash stops at its next step after its time and tells the server, which retires it; one
// made to hang blocks until the run ends, and the supervisor's watch() finds it when its
// minibatch is --worker-timeout past its end. An exception in any thread (worker, server,
// WakeTimer, the supervisor's) ends the run with StopReason::kFailed and its message.
//
// The server (the model, the rule, tickets, failures, checkpoints) is the LockedServer shared
// with the MPI engine; this engine is its transport: worker slots, a wake-up policy and threads.
// Lock order: the server's lock, then a WorkerSlot's mutex, then the WakeTimer's; never the
// reverse, and never two slots at once. The ParameterStore takes no lock (its pins are atomic).
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <tbb/concurrent_queue.h>

#include "engine/locked_server.hpp"
#include "engine/parameter_store.hpp"
#include "engine/run_context.hpp"
#include "engine/server_transport.hpp"
#include "engine/wake_policy.hpp"
#include "engine/worker_slot.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {

class ThreadEngine final : public ServerTransport {
 public:
  explicit ThreadEngine(RunContext& ctx);
  ~ThreadEngine() override;
  Result<RunRecord> run();

  // ServerTransport: the server's decisions carried out on the worker slots (server lock held).
  void assign(const Assignment& a) override;
  void after_step() override { wake_->after_step(); }
  void delivered(int w) override { wake_->on_delivered(w); }
  void retired(int w) override;
  std::optional<Clock::time_point> due(int w) override;
  void stopped() override;
  // The workers' computed, busy and idle: a resumed run goes on counting them.
  void save(StateWriter& out) override;
  void load(StateReader& in) override;

 private:
  // A gradient handed to the server thread (--server thread).
  struct Push {
    int worker = -1;  // -1: the server thread stops
    std::uint64_t ticket = 0;
    float loss = 0.0f;
    EngineClock::time_point pushed_at;
    ParameterStore::Pin pin;  // w_tau, held until the server has read it
    bool crashed = false;     // not a gradient: the worker crashed at pushed_at (--fail)
  };

  // thread_worker.cpp: the worker's side, the shared WorkerLoop (worker_loop.hpp) on a port
  // over worker w's slot.
  class SlotPort;
  void worker_main(int w);
  // Worker w hands its gradient to the server: runs the step (inline) or queues it (thread).
  void deliver(int w, float loss);
  // thread_failures.cpp: worker w fails as --fail says, at `at`: a crash tells the server
  // (inline: retires itself; thread: queues a notice) and returns; a hang blocks until the run
  // stops.
  void fail_worker(int w, FailureKind how, EngineClock::time_point at);

  // thread_engine.cpp: the server thread (--server thread).
  void server_main();
  LockedServer::Push push_of(int w, std::uint64_t ticket, float loss, EngineClock::time_point at,
                             const ParameterStore::Pin& pin);

  RunContext& ctx_;
  const TrainerOptions& o_;
  LockedServer server_;
  // Declared after server_: a slot may still hold a pin of its store when they are destroyed.
  std::vector<WorkerSlot> slots_;
  // Declared after slots_ and server_: a ServerTimers' thread calls into the slots and pins the
  // store, so it must stop first.
  std::unique_ptr<WakePolicy> wake_;
  // --server thread: pushes for the server thread; bounded by P (each worker has at most one
  // minibatch in flight) plus the stop sentinel. std::allocator, not TBB's cache-aligned one:
  // that one draws pages from libtbbmalloc, whose reuse ThreadSanitizer cannot see, so a page
  // recycled between the server and a worker showed as a race. Pages hold many pushes; the
  // allocator's cost does not show.
  tbb::concurrent_bounded_queue<Push, std::allocator<Push>> pushes_;

  std::mutex start_mu_;
  std::condition_variable start_cv_;
  bool started_ = false;                  // GUARDED_BY(start_mu_)
  EngineClock::time_point start_;         // written before started_ is set; read by workers after
  EngineClock::time_point resumed_from_;  // likewise: when this process began the run (start_
                                          // unless resumed, which sets the clock back)
};

}  // namespace stalesgd
