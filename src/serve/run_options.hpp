// The runtime theory's prediction for `stalesgd serve` before a run's final summary.json says
// it: from a run's options (runs.csv's row, or the config of the summary.json written at the
// start), resolved as `train` resolves them, so that a running run's seconds per iteration has
// its theory line too.
//
// Thread safety: pure functions of their arguments and the files they read.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "stalesgd/config/trainer_options.hpp"

namespace stalesgd::serve {

// {"seconds_per_iteration", "method", "formula"} as summary.json's "theory" will hold it, from
// the options `settings` give; nullopt when they do not resolve or the theory has no prediction
// (the sequential trainer, a delay without a mean).
std::optional<nlohmann::json> predict_from_settings(
    const std::map<std::string, std::string>& settings);
// The same from summary.json's "config" (options_from_json), or from options: a plug-in they
// name is never loaded.
std::optional<nlohmann::json> predict_from_config(const nlohmann::json& config);
std::optional<nlohmann::json> predict_from_options(TrainerOptions options);

}  // namespace stalesgd::serve
