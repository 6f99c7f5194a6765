// The sequential reference: plain minibatch SGD in the calling thread, no server, no delays.
// The parameter server with P = 1 and the sync rule must reproduce it bit for bit, so it draws
// its minibatches as worker 0 does and updates through the same UpdateAccumulator.
#include <chrono>
#include <cmath>

#include "engine/run_context.hpp"
#include "engine/run_supervisor.hpp"
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
  RunSupervisor supervisor(ctx, RunSupervisor::Evaluation::kBackground);
  const LearningRate& lr_rule = ctx.run.learning_rate();

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  std::uint64_t j = 0;
  WorkerRecord& stats = run.workers[0];
  StopReason reason = StopReason::kNone;
  for (;;) {
    const double now = elapsed();
    reason = supervisor.stop_due(now, j);
    if (reason != StopReason::kNone) break;
    if (now >= supervisor.next_snapshot_s()) {
      supervisor.snapshot(now, j, w);
      supervisor.progress(now, j, 0.0);
    }
    supervisor.journal(run);
    const Batch batch = sampler.next();
    ++stats.started;
    const float loss = *model.loss_and_gradient(w, batch, grad, *ws);
    ++stats.computed;
    const double lr = lr_rule.rate({j, 0, 0.0});
    if (!std::isfinite(loss)) {
      reason = StopReason::kDiverged;
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
  const double end = elapsed();
  stats.busy_s = end;
  return supervisor.finish(std::move(run), reason, end, j, w);
}

}  // namespace stalesgd
