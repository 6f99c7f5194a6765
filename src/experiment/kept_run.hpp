// What `race --resume` keeps of an earlier race: a finished run (its summary.json) or a cut one
// (its checkpoint), each compared with what the experiment file says of that run now, so that
// results.csv, runs.csv and every summary.json describe the same runs (docs/experiments.md).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "output/run_journal.hpp"
#include "stalesgd/config/trainer_options.hpp"
#include "stalesgd/experiment/race.hpp"

namespace stalesgd {

// What --resume keeps of a run of the earlier race: its summary (it finished) or its
// checkpoint (it was cut); neither: it runs afresh.
struct KeptRun {
  std::optional<nlohmann::json> summary;
  std::optional<std::string> payload;
  JournalOffsets offsets;
  double checkpoint_every_s = 0.0;  // the cut run's, for a --resume without --checkpoint-every
};

// The kept part of run `r` in `dir`, checked against the experiment file's settings for it
// (and, for a cut run, its identity against `data`) before the race writes anything: a changed
// run is refused naming the setting, or with settings.rerun_changed run again.
Result<KeptRun> keep(const ExperimentRun& r, const std::filesystem::path& dir,
                     const RaceSettings& settings, const RaceData& data);

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
