// The run folder's second record of a run's options: run.toml, written when the run starts
// and again at each resume, beside the checkpoint's flags. --resume compares the two
// (docs/reliability.md, "Checkpoint and resume"), so a checkpoint whose flags and digest were
// both rewritten (its CRC sealed again) is refused instead of splicing another run onto this one.
#pragma once

#include <filesystem>

#include "stalesgd/config/trainer_options.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

// Whether DIR/run.toml records the options `options` (a resumed run's, from its checkpoint)
// decide a run with: every key but those outside_the_run(). The Error is one line naming the
// first key that differs, both values and the fix.
Status check_recorded_options(const std::filesystem::path& dir, const TrainerOptions& options);

}  // namespace stalesgd
