// LocalSteps: a model whose "gradient" is a worker's local SGD (docs/rules.md, "FedBuff"). A job
// hands it Q minibatches of B samples at once (--batch B, --local-steps Q); it takes Q steps of
// --local-lr from the server's point w, each on the next B samples, and writes the change
// w - y_Q where the gradient would go, which the server applies with --lr (FedBuff's server step
// size). Every engine gets local steps this way: the job's samples come from its sampler and its
// delay is the Q minibatches' (StragglerProfile::with_draws_per_job).
//
// Thread safety: as the wrapped model's; the scratch lives in the workspace.
#pragma once

#include <cstddef>
#include <memory>

#include "stalesgd/model/model.hpp"

namespace stalesgd {

// `input_dim`: floats per sample (the split's dim()), to step through a job's samples.
std::unique_ptr<Model> make_local_steps(std::unique_ptr<Model> inner, int steps, double local_lr,
                                        std::size_t input_dim);

}  // namespace stalesgd
