// EventSimulator: P workers under a K-of-P rule on a discrete-event clock. Each minibatch takes
// its delay sample X (pad: max(compute, X); add: compute + X) of virtual time; the simulator
// keeps the event order (ties broken by scheduling order, so a seed gives one history) and the
// worker states, and asks its Callbacks what the server decides at each arrival. The
// virtual-time engine answers with real gradients (ServerCore); the runtime theory's Monte
// Carlo answers with the bare rule (no gradients).
//
// Thread safety: single-threaded by design.
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

#include "stalesgd/engine/trainer_options.hpp"
#include "stalesgd/metrics/records.hpp"
#include "stalesgd/rules/rule.hpp"
#include "stalesgd/straggler/profile.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

class EventSimulator {
 public:
  class Callbacks {
   public:
    virtual ~Callbacks() = default;
    // Before the event at time t is processed; false stops the run (budgets, snapshots).
    virtual bool before_event(double t, std::uint64_t version) = 0;
    // Worker w starts a minibatch on `version` at time t.
    virtual void on_start(double /*t*/, int /*w*/, std::uint64_t /*version*/) {}
    // Worker w's minibatch (computed on `computed_on`) reaches the server at time t.
    virtual Result<Decision> on_arrival(double t, int w, std::uint64_t computed_on) = 0;
    // Worker w's minibatch in flight was cancelled at time t.
    virtual void on_cancel(double /*t*/, int /*w*/) {}
  };

  EventSimulator(int workers, const StragglerProfile& delays, std::uint64_t seed, DelayMode mode,
                 double compute_s);

  // Runs from t = 0 (every worker starting on version 0) until before_event returns false or
  // an arrival returns an Error.
  Status run(Callbacks& callbacks);

  double now() const { return now_; }
  std::uint64_t version() const { return version_; }
  // Per-worker started/pushed/cancelled/busy/idle (applied is the server's to fill).
  const std::vector<WorkerRecord>& workers() const { return stats_; }

 private:
  struct Event {
    double t;
    std::uint64_t seq;  // tie-breaker: scheduling order
    int worker;
    std::uint64_t generation;
    bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  struct WorkerState {
    bool computing = false;
    bool waiting = false;
    std::uint64_t generation = 0;  // bumped on cancel: the pending event is void
    std::uint64_t version = 0;
    double started_at = 0.0;
    double waiting_since = 0.0;
  };

  void start(int w, Callbacks& callbacks);

  int workers_;
  DelayMode mode_;
  double compute_s_;
  std::vector<DelaySampler> delays_;
  std::vector<WorkerState> state_;
  std::vector<WorkerRecord> stats_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::uint64_t seq_ = 0;
  double now_ = 0.0;
  std::uint64_t version_ = 0;
};

}  // namespace stalesgd
