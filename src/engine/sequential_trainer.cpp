// The sequential reference: plain minibatch SGD in the calling thread, no server, no delays.
// The parameter server with P = 1 and the sync rule must reproduce it bit for bit, so it draws
// its minibatches as worker 0 does and updates through the same UpdateAccumulator.
#include <chrono>
#include <cmath>

#include "engine/run_context.hpp"
#include "engine/run_supervisor.hpp"
#include "engine/update_accumulator.hpp"
#include "output/checkpoint.hpp"
#include "stalesgd/data/sampler.hpp"
#include "stalesgd/util/seed.hpp"
#include "util/state_stream.hpp"

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
  MinibatchSampler sampler = ctx.sampler(0, derive_seed(o.seed, SeedStream::kSampler, 0));
  RunSupervisor supervisor(ctx, RunSupervisor::Evaluation::kBackground);
  const LearningRate& lr_rule = ctx.run.learning_rate();

  std::uint64_t j = 0;
  // A checkpoint (docs/reliability.md): the parameters, the update count and the minibatch
  // stream; the records are the supervisor's part.
  const auto save = [&](double t) {
    StateWriter out;
    out.tag("sequential");
    out.u64(j);
    out.values(w);
    out.u64(run.workers[0].started);
    sampler.save(out);
    supervisor.checkpoint(t, run, out.bytes());
  };
  double resumed_at = 0.0;
  if (ctx.resume != nullptr) {
    auto resumed = supervisor.resume(*ctx.resume, "sequential", [&](StateReader& in) {
      j = in.u64();
      auto saved = in.values<float>(static_cast<std::int64_t>(n));
      if (in.ok()) w = std::move(saved);
      const std::uint64_t started = in.u64();
      run.workers[0].started = started;
      run.workers[0].computed = run.workers[0].pushed = run.workers[0].applied = j;
      sampler.load(in);
    });
    if (!resumed) return resumed.error();
    if (j != resumed->rows.updates.size()) {
      return Error{"checkpoint: the updates do not add up"};
    }
    run.updates = std::move(resumed->rows.updates);
    run.gradients = std::move(resumed->rows.gradients);
    resumed_at = resumed->t;
  }

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now() - std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(resumed_at));
  supervisor.start_clock(start);
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  WorkerRecord& stats = run.workers[0];
  StopReason reason = StopReason::kNone;
  for (;;) {
    const double now = elapsed();
    reason = supervisor.stop_due(now, j);
    if (reason == StopReason::kInterrupted && o.checkpoint_every_s > 0.0) save(now);
    if (reason != StopReason::kNone) break;
    if (supervisor.checkpoint_due(now)) save(now);
    if (now >= supervisor.next_snapshot_s()) {
      supervisor.snapshot(now, j, w);
      supervisor.progress(now, j, 0.0);
    }
    supervisor.journal(run);
    const auto began = Clock::now();  // the minibatch's start, for its duration_s
    const Batch batch = sampler.next();
    ++stats.started;
    float loss = 0.0f;
    try {
      loss = *model.loss_and_gradient(w, batch, grad, *ws);
    } catch (const ModelError& e) {  // the user's module: the run ends failed, its line kept
      if (!e.detail().empty()) ctx.logger().debug("{}\n{}", e.what(), e.detail());
      reason = StopReason::kFailed;
      run.stop_message = e.what();
      run.model_failed = true;
      break;
    }
    ++stats.computed;
    const double duration_s = std::chrono::duration<double>(Clock::now() - began).count();
    const double lr = lr_rule.rate({j, 0, 0.0});
    if (diverged(loss, ctx.data.num_classes)) {
      reason = StopReason::kDiverged;
      run.divergence = divergence_error(j + 1, loss, 0, lr).message;
      break;
    }
    UpdateAccumulator::apply_single(w, grad, static_cast<float>(lr), w, model.num_state());
    ++j;
    ++stats.pushed;
    ++stats.applied;
    run.updates.push_back({j, elapsed(), 1, 0.0, 0, lr, loss});
    run.gradients.push_back({j, 0, j - 1, 0, duration_s});
  }
  const double end = elapsed();
  stats.busy_s = end;
  return supervisor.finish(std::move(run), reason, end, j, w);
}

}  // namespace stalesgd
