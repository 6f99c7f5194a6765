// The virtual-time engine: the same rules and ServerCore as the real-thread engine, real
// gradients on real data, but time comes from the delay samples on a discrete-event clock
// (EventSimulator) instead of sleeps. One thread, no wall-clock reads on the result path: two
// runs with the same seed write byte-identical outputs. A gradient is computed when it
// arrives, from the parameter version its worker pinned at the start, so cancelled work costs
// no real time.
#include <cmath>
#include <vector>

#include "engine/evaluator.hpp"
#include "engine/event_simulator.hpp"
#include "engine/progress.hpp"
#include "engine/run_context.hpp"
#include "engine/server_core.hpp"
#include "stalesgd/data/sampler.hpp"
#include "stalesgd/util/seed.hpp"

namespace stalesgd {
namespace {

class VirtualEngine final : public EventSimulator::Callbacks {
 public:
  VirtualEngine(RunContext& ctx, Rule& rule)
      : ctx_(ctx),
        o_(ctx.options),
        store_(ctx.initial),
        core_(ctx, rule, store_, run_),
        evaluator_(*ctx.model, ctx.data,
                   {false, o_.eval_test_samples, o_.eval_train_samples, o_.target_error}),
        progress_(o_.progress),
        ws_(ctx.model->make_workspace(o_.batch)),
        grad_(ctx.model->num_params()),
        pins_(static_cast<std::size_t>(o_.workers)) {
    samplers_.reserve(static_cast<std::size_t>(o_.workers));
    for (int w = 0; w < o_.workers; ++w) {
      samplers_.emplace_back(ctx.data.train, o_.batch, derive_seed(o_.seed, SeedStream::kSampler, w));
    }
  }

  bool before_event(double t, std::uint64_t version) override {
    // Snapshots due before this event see the parameters as they are now.
    // Snapshot n is due at n * eval_every (no running sum: no drift); one at the time budget
    // itself is left to the final snapshot.
    for (;;) {
      const double due = static_cast<double>(evals_taken_) * o_.eval_every_s;
      if (due > t || (o_.time_s > 0.0 && due >= o_.time_s)) break;
      evaluator_.submit(due, version, store_.current());
      ++evals_taken_;
      auto latest = evaluator_.latest();
      progress_.update(t, version, latest ? std::optional(latest->test_error) : std::nullopt,
                       core_.mean_staleness());
    }
    if (auto reason = ctx_.budget_reached(version, t); !reason.empty()) {
      run_.stop_reason = reason;
      end_ = reason == "time" ? o_.time_s : last_t_;
      return false;
    }
    if (evaluator_.target_reached()) {
      run_.stop_reason = "target-error";
      end_ = last_t_;
      return false;
    }
    if (ctx_.interrupted()) {
      run_.stop_reason = "interrupted";
      end_ = last_t_;
      return false;
    }
    last_t_ = t;
    return true;
  }

  void on_start(double, int w, std::uint64_t) override {
    pins_[static_cast<std::size_t>(w)] = store_.acquire();
  }

  Result<Decision> on_arrival(double t, int w, std::uint64_t computed_on) override {
    const auto& pin = pins_[static_cast<std::size_t>(w)];
    const Batch batch = samplers_[static_cast<std::size_t>(w)].next();
    const float loss = *ctx_.model->loss_and_gradient(pin.params(), batch, grad_, *ws_);
    auto outcome = core_.on_gradient(t, w, computed_on, loss, grad_, pin.params());
    if (!outcome) return outcome.error();
    return outcome->decision;
  }

  void on_cancel(double, int w) override { pins_[static_cast<std::size_t>(w)].release(); }

  Result<RunRecord> run(EventSimulator& sim) {
    run_.model = ctx_.model->describe();
    run_.num_params = ctx_.model->num_params();
    if (auto s = sim.run(*this); !s) {
      run_.stop_reason = "diverged";
      run_.divergence = s.error().message;
      end_ = last_t_;
    }
    progress_.clear();
    run_.wall_s = end_;
    evaluator_.submit(end_, store_.version(), store_.current());
    run_.evals = evaluator_.finish();
    run_.workers = sim.workers();
    for (auto& rec : run_.workers) rec.applied = core_.applied(rec.worker);
    run_.param_buffers = store_.buffers();
    const auto final_params = store_.current();
    run_.final_params.assign(final_params.begin(), final_params.end());
    finish_record(o_, run_);
    return std::move(run_);
  }

 private:
  RunContext& ctx_;
  const TrainerOptions& o_;
  RunRecord run_;
  ParameterStore store_;
  ServerCore core_;
  Evaluator evaluator_;
  ProgressLine progress_;
  std::unique_ptr<Workspace> ws_;
  std::vector<float> grad_;
  std::vector<ParameterStore::Pin> pins_;
  std::vector<MinibatchSampler> samplers_;
  std::uint64_t evals_taken_ = 0;
  double last_t_ = 0.0;  // time of the last processed event
  double end_ = 0.0;
};

}  // namespace

Result<RunRecord> train_virtual(RunContext& ctx) {
  const auto& o = ctx.options;
  auto rule = make_rule(o.rule, o.workers);
  if (!rule) return rule.error();
  auto delays = StragglerProfile::parse(o.delay, o.workers, o.delay_base_dir);
  if (!delays) return delays.error();
  EventSimulator sim(o.workers, *delays, o.seed, o.delay_mode, o.compute_time_s);
  VirtualEngine engine(ctx, **rule);
  return engine.run(sim);
}

}  // namespace stalesgd
