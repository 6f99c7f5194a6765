// EventSimulator: P workers on a discrete-event clock. Each minibatch takes its delay sample X
// (pad: max(compute, X); add: compute + X) of virtual time; the simulator keeps the event order
// (ties broken by scheduling order, so a seed gives one history) and carries out what the
// server's RoundProtocol answers at each arrival: it schedules the started minibatches and voids
// the cut ones. The virtual-time engine answers with real gradients (ServerCore); the runtime
// theory's Monte Carlo with the bare protocol (no gradients).
//
// On a machine other than the free one (stalesgd/machine/machine.hpp; machine_clock.cpp) a
// minibatch is a chain of phases: the parameters cross the link, the compute C shares the cores
// with the other workers and the server (processor sharing), the delay X runs beside it (pad) or
// after it (add), the gradient crosses the link and waits its turn at the server, whose time per
// gradient and per update also runs on the shared cores. The protocol hears of the arrival when
// the server has taken the gradient in.
//
// Thread safety: single-threaded by design.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <queue>
#include <span>
#include <vector>

#include "rules/round_protocol.hpp"
#include "stalesgd/machine/machine.hpp"
#include "stalesgd/metrics/records.hpp"
#include "stalesgd/straggler/delay_mode.hpp"
#include "stalesgd/straggler/failure_plan.hpp"
#include "stalesgd/straggler/profile.hpp"
#include "stalesgd/straggler/time_limit.hpp"
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
    // What the rule allows worker w's next minibatch (Rule::budget; a time limit's attempts).
    virtual AttemptBudget budget(int /*w*/) { return {}; }
    // Worker w failed, found at time t (see inject): the server's step for its departure. An
    // Error stops the run.
    virtual Result<RoundProtocol::Step> on_failure(double /*t*/, int /*w*/, FailureKind /*how*/) {
      return RoundProtocol::Step{};
    }
  };

  // `compute_s` is C; on a machine that is not free() it runs on the machine's cores.
  EventSimulator(int workers, const StragglerProfile& delays, std::uint64_t seed, DelayMode mode,
                 double compute_s, const Machine& machine = {});

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
  // That minibatch's attempts under its time limit (one, without).
  const Attempts& attempt(int w) const { return state_[static_cast<std::size_t>(w)].attempt; }
  // Checkpoints carry each minibatch's attempts: set before save() and load() when the rule
  // limits them (a run without keeps the format it had).
  void saves_attempts(bool on) { saves_attempts_ = on; }
  // The simulated seconds the server has been busy so far (0 on the free machine).
  double server_busy_s() const;

 private:
  struct Event {
    enum class What { kArrival, kCrash, kHangFound, kPhaseEnd };
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
    // The machine model's phases of the minibatch in flight (machine_clock.cpp).
    enum class Phase : std::uint8_t { kIdle, kDownload, kCompute, kSleep, kUpload, kQueued };
    Phase phase = Phase::kIdle;
    double delay_x = 0.0;      // its delay sample
    Attempts attempt{};        // how the delay was drawn (time_limit.hpp)
    double sleep_until = 0.0;  // pad: when X, counted from the compute's start, ends
  };
  using Phase = WorkerState::Phase;
  // A job on the shared cores: a worker's compute, or the server's (worker -1).
  struct CpuJob {
    double target;  // the cores' attained service at which it is done
    std::uint64_t seq;
    int worker;
    std::uint64_t generation;
    bool operator>(const CpuJob& o) const {
      return target != o.target ? target > o.target : seq > o.seq;
    }
  };
  struct Queued {
    int worker;
    std::uint64_t generation;
  };
  static constexpr double kNever = std::numeric_limits<double>::infinity();

  void start(int w, Callbacks& callbacks);
  // Every cut of an arrival's (or a failure's) step, then every start, in the protocol's order.
  void carry_out(const RoundProtocol::Step& step, Callbacks& callbacks);
  // The crash events of inject(), first in the queue (a crash wins a tie with an arrival).
  void schedule_crashes();
  // A crash or a hang found (event_simulator_failures.cpp).
  Status fail(const Event& e, Callbacks& callbacks);

  // The machine model (machine_clock.cpp).
  Status run_on_machine(Callbacks& callbacks);
  void start_on_machine(int w, double x);  // start()'s minibatch, its delay x drawn
  void begin_compute(int w);
  void compute_done(int w);
  void begin_upload(int w);
  void at_server(int w);
  void serve_next();
  Status server_done(Callbacks& callbacks);
  void timer(double at, int w);
  void cpu_start(int worker, std::uint64_t generation, double work);
  double cpu_rate() const;
  double next_cpu_done();  // drops void jobs first
  double transfer(double& nic_free);
  double copy_s() const;  // a message's copy on the cores (a memory link), else 0
  void save_machine(StateWriter& out) const;
  void load_machine(StateReader& in);

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
  bool saves_attempts_ = false;

  Machine machine_;
  bool on_machine_ = false;  // !machine_.free()
  std::priority_queue<CpuJob, std::vector<CpuJob>, std::greater<>> cpu_;
  int cpu_active_ = 0;        // jobs on the cores
  double served_ = 0.0;       // attained service of every job on the cores since t = 0
  std::deque<Queued> queue_;  // gradients waiting for the server
  enum class Server : std::uint8_t { kIdle, kGradient, kUpdate };
  Server server_ = Server::kIdle;
  int serving_ = -1;                         // the worker whose gradient it takes in
  std::vector<RoundProtocol::Start> after_;  // the step carried out once the update is applied
  double nic_out_free_ = 0.0;                // the server's side of the links: parameters out
  double nic_in_free_ = 0.0;                 // and gradients in
  double busy_s_ = 0.0, busy_since_ = 0.0;   // the server's busy time
};

}  // namespace stalesgd
