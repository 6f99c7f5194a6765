// Calibration (stalesgd/engine/calibrate.hpp): C from the model's own gradient, the server's
// times from ServerCore's own steps, each the median or mean over repeated timed runs.
#include "stalesgd/engine/calibrate.hpp"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "engine/parameter_store.hpp"
#include "engine/run_context.hpp"
#include "engine/server_core.hpp"
#include "rules/reference_rules.hpp"
#include "stalesgd/config/resolved_run.hpp"
#include "stalesgd/data/sampler.hpp"
#include "stalesgd/engine/trainer.hpp"
#include "stalesgd/model/model.hpp"
#include "stalesgd/util/seed.hpp"

namespace stalesgd {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// `o`'s model, data, batch and seed on the free machine, plain (no AdaSync, holdout, drift or
// target), writing nothing, failing no worker: what a calibration step runs.
TrainerOptions measuring(TrainerOptions o) {
  o.out_dir.clear();
  o.resume_dir.clear();
  o.save_model.clear();
  o.checkpoint_every_s = 0.0;
  o.progress = false;
  o.adasync_every_s = 0.0;
  o.record_drift = false;
  o.holdout = 0;
  o.target_error = 0.0;
  o.sequential = false;
  o.engine = EngineKind::kThread;
  o.server = ServerPlacement::kInline;
  o.workers_per_rank = 1;
  o.compute_time_s = 0.0;
  o.lr_rule = "fixed";
  o.delay = "none";
  o.machine.clear();
  o.cores = 0;
  o.server_time.clear();
  o.link = "none";
  o.shards = 1;
  o.fail = "none";
  return o;
}

// Mean seconds of ServerCore::on_gradient under `rule` with P = its K (1 for a rule whose K is
// 1), fed one fixed gradient computed on the version each worker holds.
Result<double> server_step_s(TrainerOptions o, const Dataset& data, const RuleSpec& rule,
                             double budget_s) {
  const int workers = std::max(1, rule.k);
  o = measuring(std::move(o));
  o.rule = rule;
  o.workers = workers;
  o.clock = ClockKind::kVirtual;
  o.lr = 1e-6;  // the parameters barely move: no divergence however long it runs
  if (o.iterations == 0 && o.time_s == 0.0) o.iterations = 1;
  auto run = ResolvedRun::resolve(o);
  if (!run) return run.error();
  auto model = make_model(o.model, data.train.shape, data.num_classes);
  if (!model) return model.error();
  RunContext ctx{*run, run->options(), data, std::move(model).value(), {}, nullptr};
  ctx.initial.resize(ctx.model->num_params());
  ctx.model->init_params(ctx.initial, derive_seed(o.seed, SeedStream::kModelInit));
  ParameterStore store(ctx.initial);
  RunRecord record;
  ServerCore core(ctx, store, record);
  (void)core.begin();
  const std::vector<float> grad(ctx.initial.size(), 1e-3f);
  std::uint64_t steps = 0;
  const auto t0 = Clock::now();
  double spent = 0.0;
  // At least a few hundred steps, whole rounds of `workers`.
  while (steps < 256 || spent < budget_s) {
    for (int w = 0; w < workers; ++w) {
      const auto pin = store.acquire();
      auto out =
          core.on_gradient(0.0, w, core.protocol().version_of(w), 1.0f, 0.0, grad, pin.params());
      if (!out) return out.error();
    }
    steps += static_cast<std::uint64_t>(workers);
    spent = seconds_since(t0);
    if (steps > 10'000'000) break;
  }
  return spent / static_cast<double>(steps);
}

// Seconds per update of the thread engine, async with P workers, no delay, for about
// `budget_s` (iterations estimated from `per_gradient_s`).
Result<double> engine_update_s(TrainerOptions o, const Dataset& data, int workers,
                               double per_gradient_s, double budget_s) {
  o = measuring(std::move(o));
  o.rule = each_gradient_rule();
  o.workers = workers;
  o.clock = ClockKind::kReal;
  o.delay = "none";
  o.eval_every_s = 1e6;
  o.eval_test_samples = 1;
  o.eval_train_samples = 1;
  o.time_s = 0.0;
  o.iterations = static_cast<std::uint64_t>(
      std::clamp(budget_s * workers / std::max(per_gradient_s, 1e-7), 200.0, 1e7));
  auto run = train(o, data);
  if (!run) return run.error();
  const auto& u = run->updates;
  if (u.size() < 4) return Error{"calibration: the engine made too few updates"};
  // The second half, past the threads' start and the cold caches.
  const std::size_t half = u.size() / 2;
  return (u.back().wall_s - u[half - 1].wall_s) / static_cast<double>(u.size() - half);
}

}  // namespace

Result<ServerTiming> measure_server_time(const TrainerOptions& options, const Dataset& data,
                                         double budget_s) {
  constexpr int kBatchOf = 64;
  auto each = server_step_s(options, data, each_gradient_rule(), budget_s / 2);
  if (!each) return each.error();
  auto batched = server_step_s(options, data, first_k_async_rule(kBatchOf), budget_s / 2);
  if (!batched) return batched.error();
  // each = g + u, batched = g + u / 64.
  ServerTiming t;
  t.update_s = std::max(0.0, (*each - *batched) * kBatchOf / (kBatchOf - 1));
  t.gradient_s = std::max(0.0, *each - t.update_s);
  return t;
}

Result<Machine> calibrate(const TrainerOptions& options, const Dataset& data, double budget_s) {
  auto model = make_model(options.model, data.train.shape, data.num_classes);
  if (!model) return model.error();
  Model& m = **model;
  std::vector<float> params(m.num_params());
  m.init_params(params, derive_seed(options.seed, SeedStream::kModelInit));
  std::vector<float> grad(params.size());
  auto ws = m.make_workspace(options.batch);
  MinibatchSampler sampler(data.train, options.batch,
                           derive_seed(options.seed, SeedStream::kSampler, 0));
  std::vector<double> times;
  const auto t0 = Clock::now();
  while (times.size() < 20 || (seconds_since(t0) < budget_s / 4 && times.size() < 100'000)) {
    const Batch batch = sampler.next();
    const auto t = Clock::now();
    (void)m.loss_and_gradient(params, batch, grad, *ws);
    times.push_back(seconds_since(t));
  }
  std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2),
                   times.end());
  const double alone = times[times.size() / 2];
  auto server = measure_server_time(options, data, budget_s / 4);
  if (!server) return server.error();
  // C as the engine's worker spends it (the gradient, the minibatch, the records): one worker's
  // time per update less the server's. The cores slow each other down (memory, caches): the
  // time per gradient with every core busy over one core's.
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  auto one = engine_update_s(options, data, 1, alone, budget_s / 8);
  if (!one) return one.error();
  auto all = engine_update_s(options, data, cores, alone, budget_s / 8);
  if (!all) return all.error();
  Machine out;
  out.model = options.model.name;
  out.parameters = m.num_params();
  out.compute_s = std::max(alone, *one - server->gradient_s - server->update_s);
  out.server_gradient_s = server->gradient_s;
  out.server_update_s = server->update_s;
  out.contention = std::max(1.0, *all * cores / *one);
  out.contention_cores = cores;
  return out;
}

}  // namespace stalesgd
