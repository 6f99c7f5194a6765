// A run this process cannot hold, refused before any thread or buffer is made
// (docs/reliability.md, "Memory and threads"): the threads of the real clock's workers (their
// count and their stacks' address space) and the copies of the model's values the engines keep
// at least.
#pragma once

#include <cstddef>

#include "stalesgd/config/trainer_options.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

Status check_run_resources(const TrainerOptions& options, std::size_t num_params);

}  // namespace stalesgd
