// train(): builds the run's shared parts (model, w_0) and hands them to the chosen engine.
#include "engine/train_io.hpp"

#include <optional>

#include <fmt/format.h>

#include "engine/mpi/mpi_runtime.hpp"
#include "engine/run_context.hpp"
#include "engine/run_resources.hpp"
#include "model/local_steps.hpp"
#include "stalesgd/data/holdout.hpp"
#include "stalesgd/data/partition.hpp"
#include "stalesgd/util/seed.hpp"

namespace stalesgd {

Result<RunRecord> train(const ResolvedRun& run, const Dataset& data,
                        const std::atomic<bool>* interrupt) {
  return train(run, data, TrainIo{.interrupt = interrupt});
}

Result<RunRecord> train(const ResolvedRun& run, const Dataset& given, const TrainIo& io) {
  const TrainerOptions& options = run.options();
  // --holdout: the run trains on, samples and evaluates a copy whose last training samples are
  // its val split (a race shares `given` between runs with and without one).
  std::optional<Dataset> held;
  if (options.holdout > 0) {
    auto split = with_holdout(given, options.holdout);
    if (!split) return split.error();
    held.emplace(std::move(split).value());
  }
  const Dataset& data = held ? *held : given;
  if (static_cast<std::size_t>(options.batch) > data.train.count) {
    return Error{fmt::format("--batch {} is larger than the {} training samples of {}",
                             options.batch, data.train.count, data.name)};
  }
  auto model = io.model != nullptr && *io.model
                   ? Result<std::unique_ptr<Model>>(std::move(*io.model))
                   : make_model(options.model, data.train.shape, data.num_classes);
  if (!model) return model.error();
  // --local-steps: every engine's workers run local SGD through the model (model/local_steps.hpp).
  if (options.local_steps > 1) {
    model = make_local_steps(std::move(model).value(), options.local_steps, options.local_lr,
                             data.train.dim());
  }

  RunContext ctx{run,         options,      data,       std::move(model).value(),
                 {},          io.interrupt, io.journal, io.resume,
                 io.progress, io.log,       io.run_log};
  // --partition: the same shards on every rank (one seed), so an MPI worker samples its own.
  auto spec = parse_partition(options.partition);
  if (!spec) return spec.error();
  auto shards = partition_split(data.train, *spec, options.workers,
                                derive_seed(options.seed, SeedStream::kPartition));
  if (!shards) return shards.error();
  ctx.shards = std::move(shards).value();
  if (auto s = check_run_resources(options, ctx.model->num_params()); !s) return s.error();
  ctx.initial.resize(ctx.model->num_params());
  ctx.model->init_params(ctx.initial, derive_seed(options.seed, SeedStream::kModelInit));

  auto record = [&] {
    if (options.engine == EngineKind::kMpi) return train_mpi(ctx);
    if (options.sequential) return train_sequential(ctx);
    if (options.clock == ClockKind::kVirtual) return train_virtual(ctx);
    if (options.server == ServerPlacement::kHogwild) return train_hogwild(ctx);
    return train_threads(ctx);
  }();
  if (record) record->shards = shard_class_counts(data.train, ctx.shards, data.num_classes);
  return record;
}

Result<RunRecord> train(const TrainerOptions& options, const Dataset& data,
                        const std::atomic<bool>* interrupt) {
  auto run = ResolvedRun::resolve(options);
  if (!run) return run.error();
  return train(*run, data, interrupt);
}

}  // namespace stalesgd
