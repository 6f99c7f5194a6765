// What a run was started with, for `stalesgd serve` before the run's summary.json says it: the
// options of a `train --out` folder from run.log's command line, and the runtime theory's
// prediction from a run's options (runs.csv's row, or those), resolved as `train` resolves
// them, so that a running run's seconds per iteration has its theory line too.
//
// Thread safety: pure functions of their arguments and the files they read.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace stalesgd::serve {

// The options on the first line of run.log ("start: ... stalesgd train --rule async --time 20s
// ..."), keyed as runs.csv writes them (time, target_error, ...; a switch as "true"); flags
// that are not training options (--out, --force, -q) are left out. Empty for a race's run
// (runs.csv has them) and when run.log is missing or not a regular file.
std::map<std::string, std::string> settings_from_run_log(const std::filesystem::path& path);

// {"seconds_per_iteration", "method", "formula"} as summary.json's "theory" will hold it, from
// the options `settings` give; nullopt when they do not resolve or the theory has no prediction
// (the sequential trainer, a delay without a mean).
std::optional<nlohmann::json> predict_from_settings(
    const std::map<std::string, std::string>& settings);

}  // namespace stalesgd::serve
