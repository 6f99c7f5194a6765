// The virtual clock's budgets: what a virtual-clock run needs to make progress (docs/cli.md,
// "The virtual clock"). Part of ResolvedRun::resolve.
#pragma once

#include "stalesgd/config/trainer_options.hpp"
#include "stalesgd/machine/machine.hpp"
#include "stalesgd/straggler/profile.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

// On the virtual clock: refuses, in one line naming the flag and the fix, --compute-time over
// kMaxComputeTimeSeconds or not shorter than --time; a run bounded only by --time on a clock
// that nothing advances (delays all 0, no compute time, no server or link time), which would
// never reach it; and an --eval-every under which --time, or one gradient's compute time, spans
// more than kMaxVirtualEvaluations snapshots. Nothing on the real clock.
Status check_virtual_budget(const TrainerOptions& options, const StragglerProfile& delays,
                            const Machine& machine);

}  // namespace stalesgd
