// train(): runs one training job as a ResolvedRun describes it, on the engine it selects (the
// sequential reference, real threads with the server inline or on its own thread, Hogwild!, or
// virtual time), and returns what it recorded.
//
// Thread safety: train() may be called from any thread; it owns every thread it starts and
// joins them all before returning. `interrupt` may be set from a signal handler.
#pragma once

#include <atomic>

#include <spdlog/logger.h>

#include "stalesgd/config/resolved_run.hpp"
#include "stalesgd/data/dataset.hpp"
#include "stalesgd/engine/progress.hpp"
#include "stalesgd/metrics/records.hpp"
#include "stalesgd/output/run_journal.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

// What a run shares with its caller besides its configuration and data.
struct TrainIo {
  const std::atomic<bool>* interrupt = nullptr;  // set (e.g. by a signal handler): stop cleanly
  RunJournal* journal = nullptr;  // --out: rows appended as the run goes (docs/outputs.md)
  // --resume: a checkpoint's payload (docs/reliability.md); the run continues from it, and
  // `journal` must have been opened to continue at the checkpoint's offsets.
  const std::string* resume = nullptr;
  ProgressSink* progress = nullptr;  // how far the run is, ten times a second at most; may be null
  spdlog::logger* log = nullptr;     // where the run logs (failed workers, checkpoints,
                                     // snapshots); null: spdlog's default logger
};

// A run that diverged (a non-finite minibatch loss) stops there and returns what it recorded
// with StopReason::kDiverged and `divergence` naming the iteration and the likely cause (the
// CLI reports it as an error); an interrupted run returns what it recorded with kInterrupted.
// A run whose failed workers leave its rule too few to go on (kWorkersFailed), that stalls
// (kStalled) or in one of whose threads an exception was thrown (kFailed) also returns what it
// recorded, with stop_message the one line saying why (docs/rules.md, "Failed workers").
// An Error: the model does not fit the data, or the batch is larger than the training split.
// A write to the journal that fails ends the run with StopReason::kFailed and RunRecord::error.
Result<RunRecord> train(const ResolvedRun& run, const Dataset& data, const TrainIo& io);
Result<RunRecord> train(const ResolvedRun& run, const Dataset& data,
                        const std::atomic<bool>* interrupt = nullptr);

// Resolves `options` first (an Error names the bad flag), then trains.
Result<RunRecord> train(const TrainerOptions& options, const Dataset& data,
                        const std::atomic<bool>* interrupt = nullptr);

}  // namespace stalesgd
