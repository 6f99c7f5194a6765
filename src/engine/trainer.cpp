// train(): builds the run's shared parts (model, w_0) and hands them to the chosen engine.
#include "stalesgd/engine/trainer.hpp"

#include <fmt/format.h>

#include "engine/mpi/mpi_runtime.hpp"
#include "engine/run_context.hpp"
#include "stalesgd/util/seed.hpp"

namespace stalesgd {

Result<RunRecord> train(const ResolvedRun& run, const Dataset& data,
                        const std::atomic<bool>* interrupt) {
  return train(run, data, TrainIo{.interrupt = interrupt});
}

Result<RunRecord> train(const ResolvedRun& run, const Dataset& data, const TrainIo& io) {
  const TrainerOptions& options = run.options();
  if (static_cast<std::size_t>(options.batch) > data.train.count) {
    return Error{fmt::format("--batch {} is larger than the {} training samples of {}",
                             options.batch, data.train.count, data.name)};
  }
  auto model = make_model(options.model, data.train.shape, data.num_classes);
  if (!model) return model.error();

  RunContext ctx{run,         options,      data,       std::move(model).value(),
                 {},          io.interrupt, io.journal, io.resume,
                 io.progress, io.log};
  ctx.initial.resize(ctx.model->num_params());
  ctx.model->init_params(ctx.initial, derive_seed(options.seed, SeedStream::kModelInit));

  if (options.engine == EngineKind::kMpi) return train_mpi(ctx);
  if (options.sequential) return train_sequential(ctx);
  if (options.clock == ClockKind::kVirtual) return train_virtual(ctx);
  if (options.server == ServerPlacement::kHogwild) return train_hogwild(ctx);
  return train_threads(ctx);
}

Result<RunRecord> train(const TrainerOptions& options, const Dataset& data,
                        const std::atomic<bool>* interrupt) {
  auto run = ResolvedRun::resolve(options);
  if (!run) return run.error();
  return train(*run, data, interrupt);
}

}  // namespace stalesgd
