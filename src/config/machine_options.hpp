// The machine a run's options describe (stalesgd/machine/machine.hpp): a --machine file, then
// the flags that override its values. `train` and `theory` resolve it the same way.
#pragma once

#include "stalesgd/config/trainer_options.hpp"
#include "stalesgd/machine/machine.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

// --machine's file (for --model's name), then --cores, --server-time (not "auto", which the
// engine measures), --link, --shards and --compute-time where given. One line naming the flag
// on a bad value.
Result<Machine> resolve_machine(const TrainerOptions& options);

}  // namespace stalesgd
