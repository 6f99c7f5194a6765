// train(): runs one training job as TrainerOptions describe it, on the engine they select
// (the sequential reference, real threads, or virtual time), and returns what it recorded.
//
// Thread safety: train() may be called from any thread; it owns every thread it starts and
// joins them all before returning. `interrupt` may be set from a signal handler.
#pragma once

#include <atomic>

#include "stalesgd/data/dataset.hpp"
#include "stalesgd/engine/trainer_options.hpp"
#include "stalesgd/metrics/records.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

// Bad options are an Error. A run that diverged (a non-finite minibatch loss) stops there and
// returns what it recorded with stop_reason "diverged" and `divergence` naming the iteration
// and the likely cause (the CLI reports it as an error); an interrupted run returns what it
// recorded with stop_reason "interrupted".
Result<RunRecord> train(const TrainerOptions& options, const Dataset& data,
                        const std::atomic<bool>* interrupt = nullptr);

}  // namespace stalesgd
