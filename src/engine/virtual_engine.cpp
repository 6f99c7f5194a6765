// The virtual-time engine: the same rules, round protocol and ServerCore as the real-thread
// engine, real gradients on real data, but time comes from the delay samples on a discrete-event
// clock (EventSimulator) instead of sleeps. One thread, no wall-clock reads on the result path:
// two runs with the same seed write byte-identical outputs. A gradient is computed when it
// arrives, from the parameter version its worker pinned at the start, so cut work costs no
// real time.
#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "engine/caught_failure.hpp"
#include "engine/run_context.hpp"
#include "engine/run_supervisor.hpp"
#include "engine/server_core.hpp"
#include "engine/virtual_watchdog.hpp"
#include "output/checkpoint.hpp"
#include "sim/event_simulator.hpp"
#include "stalesgd/data/sampler.hpp"
#include "stalesgd/engine/calibrate.hpp"
#include "stalesgd/util/seed.hpp"
#include "util/fault_point.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {
namespace {

class VirtualEngine final : public EventSimulator::Callbacks {
 public:
  VirtualEngine(RunContext& ctx, const Machine& machine)
      : ctx_(ctx),
        o_(ctx.options),
        store_(ctx.initial),
        core_(ctx, store_, run_),
        supervisor_(ctx, RunSupervisor::Evaluation::kInline),
        ws_(ctx.model->make_workspace(o_.batch)),
        grad_(ctx.model->num_params()),
        pins_(static_cast<std::size_t>(o_.workers)),
        sim_(o_.workers, ctx.run.delays(), o_.seed, o_.delay_mode, machine.compute_s, machine) {
    samplers_.reserve(static_cast<std::size_t>(o_.workers));
    for (int w = 0; w < o_.workers; ++w) {
      samplers_.push_back(ctx.sampler(w, derive_seed(o_.seed, SeedStream::kSampler, w)));
    }
    // Attempts drawn under a time limit are checkpointed.
    sim_.saves_attempts(core_.protocol().time_limited());
  }

  std::span<const RoundProtocol::Start> begin() override { return core_.begin(); }

  bool before_event(double t) override {
    const std::uint64_t version = store_.version();
    // A run that cannot move ends here, before the snapshots it would flood (docs/reliability.md).
    if (auto stall = watchdog_.check(t, version); !stall.empty()) {
      ctx_.logger().debug("virtual watchdog: {}", stall);
      reason_ = StopReason::kStalled;
      run_.stop_message = std::move(stall);
      end_ = last_t_;
      return false;
    }
    // Snapshots due before this event see the parameters as they are now (nothing changes
    // between events), recorded at their due time. A signal ends a long series of them.
    for (double due = supervisor_.next_snapshot_s(); due <= t && !ctx_.interrupted();
         due = supervisor_.next_snapshot_s()) {
      supervisor_.snapshot(due, version, store_.current());
      supervisor_.progress(t, version, core_.mean_staleness());
    }
    if (const auto reason = supervisor_.stop_due(t, version); reason != StopReason::kNone) {
      // Ctrl-C: a checkpoint at the stop (this event still queued), to resume from here.
      if (reason == StopReason::kInterrupted && o_.checkpoint_every_s > 0.0) checkpoint(t);
      reason_ = reason;
      end_ = reason == StopReason::kTime ? o_.time_s : last_t_;
      return false;
    }
    if (supervisor_.checkpoint_due(t)) checkpoint(t);
    last_t_ = t;
    supervisor_.journal(run_);
    return true;
  }

  void on_start(double, int w) override { pins_[static_cast<std::size_t>(w)] = store_.acquire(); }

  Result<RoundProtocol::Step> on_arrival(double t, int w) override {
    const auto& pin = pins_[static_cast<std::size_t>(w)];
    const Batch batch = samplers_[static_cast<std::size_t>(w)].next();
    float loss = 0.0f;
    try {
      fault_point("worker");  // the exit-status tests' injected bug, as in a worker thread
      loss = *ctx_.model->loss_and_gradient(pin.params(), batch, grad_, *ws_);
    } catch (...) {  // the user's module, the machine (exit 1) or a bug (exit 3)
      const CaughtFailure failure = caught_failure(fmt::format("worker {}", w));
      if (!failure.detail.empty()) ctx_.logger().debug("{}\n{}", failure.message, failure.detail);
      mark_cause(run_, failure.cause);
      return fail(t, failure.message);
    }
    // The simulated duration: X with --compute-time as the delay mode combines them (under a
    // time limit, from the start of the last attempt).
    const Attempts& a = sim_.attempt(w);
    const double duration = t - sim_.started_at(w) - a.offset_s;
    auto outcome = core_.on_gradient(t, w, pin.version(), loss, duration, grad_, pin.params(),
                                     a.attempts, a.abandoned);
    if (!outcome) return outcome.error();
    return outcome->step;
  }

  void on_cancel(double, int w) override { pins_[static_cast<std::size_t>(w)].release(); }

  AttemptBudget budget(int w) override { return core_.protocol().budget(w); }

  // A failed worker leaves (docs/rules.md, "Failed workers"); too few left ends the run.
  Result<RoundProtocol::Step> on_failure(double t, int w, FailureKind how) override {
    pins_[static_cast<std::size_t>(w)].release();
    auto outcome = core_.retire(t, w, how);
    if (!outcome) {
      reason_ = StopReason::kWorkersFailed;
      run_.stop_message = outcome.error().message;
      end_ = t;
      return outcome.error();
    }
    return outcome->step;
  }

  Result<RunRecord> run() {
    sim_.inject(ctx_.run.failures(), o_.worker_timeout_s);
    if (ctx_.resume != nullptr) {
      if (auto s = resume(*ctx_.resume); !s) return s.error();
    }
    run_.model = ctx_.model->describe();
    run_.num_params = ctx_.model->num_params();
    // An exception from the rules, the server or the simulator is a bug: the run ends failed
    // with what it recorded written, as a real-clock thread's (docs/reliability.md).
    try {
      if (auto s = sim_.run(*this); !s && reason_ == StopReason::kNone) {
        reason_ = StopReason::kDiverged;
        run_.divergence = s.error().message;
        end_ = last_t_;
      }
    } catch (...) {
      const CaughtFailure failure = caught_failure("the virtual engine");
      mark_cause(run_, failure.cause);
      fail(last_t_, failure.message);
    }
    run_.workers = sim_.workers();
    for (auto& rec : run_.workers) core_.count(rec.worker, rec);
    run_.param_buffers = store_.buffers();
    return supervisor_.finish(std::move(run_), reason_, end_, store_.version(), store_.current());
  }

 private:
  // Ends the run as failed at time t with its one line.
  Error fail(double t, std::string message) {
    reason_ = StopReason::kFailed;
    run_.stop_message = std::move(message);
    end_ = t;
    return Error{run_.stop_message};
  }

  // The engine's part of a checkpoint at time t (docs/reliability.md): the parameters and
  // every version a worker still pins, the server, the event queue and every random stream.
  void checkpoint(double t) {
    StateWriter out;
    out.tag("virtual");
    out.f64(last_t_);
    out.u64(store_.version());
    out.values(store_.current());
    out.u64(store_.buffers());
    // Each pinned version once (workers often share one), then which one each worker holds.
    std::vector<std::uint64_t> versions;
    for (const auto& pin : pins_) {
      if (pin.held() && pin.version() != store_.version() &&
          std::find(versions.begin(), versions.end(), pin.version()) == versions.end()) {
        versions.push_back(pin.version());
        out.u64(pin.version());
        out.values(pin.params());
      }
    }
    out.u64(~std::uint64_t{0});  // end of the versions
    for (const auto& pin : pins_) {
      out.boolean(pin.held());
      out.u64(pin.held() ? pin.version() : 0);
    }
    core_.save(out);
    sim_.save(out);
    for (const auto& s : samplers_) s.save(out);
    supervisor_.checkpoint(t, run_, out.bytes());
  }

  Status resume(const std::string& payload) {
    auto resumed = supervisor_.resume(payload, "virtual", [&](StateReader& in) { load(in); });
    if (!resumed) return resumed.error();
    run_ = std::move(resumed->rows);
    return {};
  }

  // The engine's part of a checkpoint, as checkpoint() wrote it after its tag.
  void load(StateReader& in) {
    const std::size_t n = ctx_.model->num_params();
    last_t_ = in.f64();
    const std::uint64_t version = in.u64();
    const auto current = in.values<float>(static_cast<std::int64_t>(n));
    const std::uint64_t buffers = in.u64();
    if (in.ok() && (buffers < 1 || buffers > ParameterStore::kDefaultMaxSlots)) {
      in.fail("a buffer count out of range");
    }
    if (in.ok()) store_.restore(version, current, buffers);
    std::vector<ParameterStore::Pin> held;  // one pin per saved version
    for (std::uint64_t v = in.u64(); in.ok() && v != ~std::uint64_t{0}; v = in.u64()) {
      const auto params = in.values<float>(static_cast<std::int64_t>(n));
      if (!in.ok() || held.size() >= pins_.size()) {
        in.fail("more pinned versions than workers");
        break;
      }
      held.push_back(store_.adopt(v, params));
    }
    for (auto& pin : pins_) {
      const bool has = in.boolean();
      const std::uint64_t v = in.u64();
      if (!in.ok() || !has) continue;
      if (v == store_.version()) {
        pin = store_.acquire();
        continue;
      }
      const auto it =
          std::find_if(held.begin(), held.end(), [&](const auto& p) { return p.version() == v; });
      if (it == held.end()) {
        in.fail("a worker pins a version the checkpoint does not hold");
        break;
      }
      pin = it->share();
    }
    core_.load(in);
    sim_.load(in);
    for (auto& s : samplers_) s.load(in);
  }

  RunContext& ctx_;
  const TrainerOptions& o_;
  RunRecord run_;
  ParameterStore store_;
  ServerCore core_;
  RunSupervisor supervisor_;
  std::unique_ptr<Workspace> ws_;
  std::vector<float> grad_;
  std::vector<ParameterStore::Pin> pins_;
  std::vector<MinibatchSampler> samplers_;
  EventSimulator sim_;
  VirtualWatchdog watchdog_{o_};
  StopReason reason_ = StopReason::kNone;
  double last_t_ = 0.0;  // time of the last processed event
  double end_ = 0.0;
};

}  // namespace

Result<RunRecord> train_virtual(RunContext& ctx) {
  // The machine it models (docs/machine.md): messages sized by this model; --server-time auto
  // measured here, on this machine, for this model.
  Machine machine = ctx.run.machine();
  machine.parameters = ctx.model->num_params();
  if (ctx.options.server_time == "auto") {
    auto t = measure_server_time(ctx.options, ctx.data);
    if (!t) return t.error();
    machine.server_gradient_s = t->gradient_s;
    machine.server_update_s = t->update_s;
  }
  if (!machine.free()) ctx.logger().info("machine: {}", machine.describe());
  VirtualEngine engine(ctx, machine);
  auto run = engine.run();
  if (run && !machine.free()) run->machine = machine;
  return run;
}

}  // namespace stalesgd
