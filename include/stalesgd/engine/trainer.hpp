// train(): runs one training job as a ResolvedRun describes it, on the engine it selects (the
// sequential reference, real threads with the server inline or on its own thread, Hogwild!, or
// virtual time), and returns what it recorded.
//
// Thread safety: train() may be called from any thread; it owns every thread it starts and
// joins them all before returning. `interrupt` may be set from a signal handler.
#pragma once

#include <atomic>

#include "stalesgd/config/resolved_run.hpp"
#include "stalesgd/data/dataset.hpp"
#include "stalesgd/metrics/records.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

// A run that diverged (a non-finite minibatch loss) stops there and returns what it recorded
// with StopReason::kDiverged and `divergence` naming the iteration and the likely cause (the
// CLI reports it as an error); an interrupted run returns what it recorded with kInterrupted.
// A run whose failed workers leave its rule too few to go on (kWorkersFailed), that stalls
// (kStalled) or in one of whose threads an exception was thrown (kFailed) also returns what it
// recorded, with stop_message the one line saying why (docs/rules.md, "Failed workers").
// An Error: the model does not fit the data, or the batch is larger than the training split.
// A run into a folder (experiment/run_folder.hpp) whose write fails ends with StopReason::kFailed.
Result<RunRecord> train(const ResolvedRun& run, const Dataset& data,
                        const std::atomic<bool>* interrupt = nullptr);

// Resolves `options` first (an Error names the bad flag), then trains.
Result<RunRecord> train(const TrainerOptions& options, const Dataset& data,
                        const std::atomic<bool>* interrupt = nullptr);

}  // namespace stalesgd
