// EventSimulator: P workers on a discrete-event clock. Each minibatch takes its delay sample X
// (pad: max(compute, X); add: compute + X) of virtual time; the simulator keeps the event order
// (ties broken by scheduling order, so a seed gives one history) and carries out what the
// server's RoundProtocol answers at each arrival: it schedules the started minibatches and voids
// the cut ones. The virtual-time engine answers with real gradients (ServerCore); the runtime
// theory's Monte Carlo with the bare protocol (no gradients).
//
// Thread safety: single-threaded by design.
#pragma once

#include <cstdint>
#include <limits>
#include <queue>
#include <span>
#include <vector>

#include "rules/round_protocol.hpp"
#include "stalesgd/metrics/records.hpp"
#include "stalesgd/straggler/delay_mode.hpp"
#include "stalesgd/straggler/failure_plan.hpp"
#include "stalesgd/straggler/profile.hpp"
#include "stalesgd/util/result.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {

class EventSimulator {
 public:
  class Callbacks {
   public:
    virtual ~Callbacks() = default;
    // Every worker's first minibatch (the protocol's begin()).
    virtual std::span<const RoundProtocol::Start> begin() = 0;
    // Before the event at time t is processed; false stops the run (budgets, snapshots).
    virtual bool before_event(double t) = 0;
    // Worker w starts a minibatch at time t.
    virtual void on_start(double /*t*/, int /*w*/) {}
    // Worker w's minibatch reaches the server at time t: the server's step.
    virtual Result<RoundProtocol::Step> on_arrival(double t, int w) = 0;
    // Worker w's minibatch in flight was cut at time t.
    virtual void on_cancel(double /*t*/, int /*w*/) {}
    // Worker w failed, found at time t (see inject): the server's step for its departure. An
    // Error stops the run.
    virtual Result<RoundProtocol::Step> on_failure(double /*t*/, int /*w*/, FailureKind /*how*/) {
      return RoundProtocol::Step{};
    }
  };

  EventSimulator(int workers, const StragglerProfile& delays, std::uint64_t seed, DelayMode mode,
                 double compute_s);

  // Failed workers (docs/rules.md, "Failed workers"; event_simulator_failures.cpp), before
  // run(). A worker that crashes at t delivers nothing from t on, and on_failure is called at
  // t. A worker that hangs at t delivers no minibatch that would end at or after t, and
  // on_failure is called `timeout_s` after the end of the first one (unless it is cut first).
  void inject(const FailurePlan& plan, double timeout_s);

  // Runs from t = 0 (or from where load() left it) until before_event returns false or an
  // arrival returns an Error.
  Status run(Callbacks& callbacks);

  // Checkpoints, taken from before_event (the next event is still queued): the clock, every
  // pending event, the workers' states and delay streams. After load(), run() goes on from
  // there instead of calling begin().
  void save(StateWriter& out) const;
  void load(StateReader& in);

  // Per-worker computed/busy/idle (the counts of minibatches are the protocol's).
  const std::vector<WorkerRecord>& workers() const { return stats_; }
  // When worker w's minibatch in flight (or its last one) started.
  double started_at(int w) const { return state_[static_cast<std::size_t>(w)].started_at; }

 private:
  struct Event {
    enum class What { kArrival, kCrash, kHangFound };
    double t;
    std::uint64_t seq;  // tie-breaker: scheduling order
    int worker;
    std::uint64_t generation;  // a crash is never void
    What what = What::kArrival;
    bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  struct WorkerState {
    bool computing = false;
    std::uint64_t generation = 0;  // bumped on a cut: the pending event is void
    double started_at = 0.0;
    double free_since = 0.0;   // when its last minibatch ended (idle until the next starts)
    double crash_at = kNever;  // inject()
    double hang_at = kNever;
  };
  static constexpr double kNever = std::numeric_limits<double>::infinity();

  void start(int w, Callbacks& callbacks);
  // Every cut of an arrival's (or a failure's) step, then every start, in the protocol's order.
  void carry_out(const RoundProtocol::Step& step, Callbacks& callbacks);
  // The crash events of inject(), first in the queue (a crash wins a tie with an arrival).
  void schedule_crashes();
  // A crash or a hang found (event_simulator_failures.cpp).
  Status fail(const Event& e, Callbacks& callbacks);

  DelayMode mode_;
  double compute_s_;
  std::vector<DelaySampler> delays_;
  std::vector<WorkerState> state_;
  std::vector<WorkerRecord> stats_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::uint64_t seq_ = 0;
  double now_ = 0.0;
  double hang_timeout_s_ = 0.0;  // inject()
  bool resumed_ = false;         // load() restored a run in progress
};

}  // namespace stalesgd
