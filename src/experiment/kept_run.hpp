// What `race --resume` keeps of an earlier race: a finished run (its summary.json) or a cut one
// (its checkpoint), each compared with what the experiment file says of that run now, so that
// results.csv, runs.csv and every summary.json describe the same runs (docs/experiments.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "stalesgd/config/trainer_options.hpp"

namespace stalesgd {

// The first setting in which a finished run's summary.json "config" differs from `now` (the
// file's options for that run, resolved), as "lr = 0.1 (the run used 0.05)"; nullopt when they
// agree. Settings that do not change a run's result are not compared: checkpoint_every,
// data_dir (the data may have moved), and the progress ones.
std::optional<std::string> changed_setting(const nlohmann::json& config, const TrainerOptions& now);

// The same for a cut run: its checkpoint's recorded flags against `now`'s, but for
// --checkpoint-every and --data-dir.
std::optional<std::string> changed_flag(const std::vector<std::string>& recorded,
                                        const TrainerOptions& now);

// The --checkpoint-every a checkpoint's flags recorded, in seconds; 0 when none.
double recorded_checkpoint_every(const std::vector<std::string>& recorded);

}  // namespace stalesgd
