// The sequential reference: plain minibatch SGD in the calling thread, no server, no delays.
// The parameter server with P = 1 and the sync rule must reproduce it bit for bit, so it draws
// its minibatches as worker 0 does and updates through the same UpdateAccumulator.
#include <chrono>
#include <cmath>

#include "engine/evaluator.hpp"
#include "engine/progress.hpp"
#include "engine/run_context.hpp"
#include "engine/update_accumulator.hpp"
#include "stalesgd/data/sampler.hpp"
#include "stalesgd/util/seed.hpp"

namespace stalesgd {

Result<RunRecord> train_sequential(RunContext& ctx) {
  const auto& o = ctx.options;
  const Model& model = *ctx.model;
  const std::size_t n = model.num_params();
  RunRecord run;
  run.model = model.describe();
  run.num_params = n;
  run.param_buffers = 1;
  run.workers.push_back(WorkerRecord{});

  std::vector<float> w = ctx.initial;
  std::vector<float> grad(n);
  auto ws = model.make_workspace(o.batch);
  MinibatchSampler sampler(ctx.data.train, o.batch, derive_seed(o.seed, SeedStream::kSampler, 0));
  Evaluator evaluator(model, ctx.data,
                      {true, o.eval_test_samples, o.eval_train_samples, o.target_error});
  ProgressLine progress(o.progress);

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  double next_eval = 0.0;
  std::uint64_t j = 0;
  WorkerRecord& stats = run.workers[0];
  for (;;) {
    const double now = elapsed();
    if (auto reason = ctx.budget_reached(j, now); !reason.empty()) {
      run.stop_reason = reason;
      break;
    }
    if (evaluator.target_reached()) {
      run.stop_reason = "target-error";
      break;
    }
    if (ctx.interrupted()) {
      run.stop_reason = "interrupted";
      break;
    }
    if (now >= next_eval) {
      evaluator.submit(now, j, w);
      next_eval += o.eval_every_s;
      auto latest = evaluator.latest();
      progress.update(now, j, latest ? std::optional(latest->test_error) : std::nullopt, 0.0);
    }
    const Batch batch = sampler.next();
    ++stats.started;
    const float loss = *model.loss_and_gradient(w, batch, grad, *ws);
    ++stats.computed;
    const double lr = ctx.lr->rate({j, 0, 0.0});
    if (!std::isfinite(loss)) {
      run.stop_reason = "diverged";
      run.divergence = divergence_error(j + 1, loss, 0, lr).message;
      break;
    }
    UpdateAccumulator::apply_single(w, grad, static_cast<float>(lr), w);
    ++j;
    ++stats.pushed;
    ++stats.applied;
    run.updates.push_back({j, elapsed(), 1, 0.0, 0, lr, loss});
    run.gradients.push_back({j, 0, j - 1, 0});
  }
  run.wall_s = elapsed();
  stats.busy_s = run.wall_s;
  progress.clear();
  evaluator.submit(run.wall_s, j, w);
  run.evals = evaluator.finish();
  run.final_params = std::move(w);
  finish_record(o, run);
  return run;
}

}  // namespace stalesgd
