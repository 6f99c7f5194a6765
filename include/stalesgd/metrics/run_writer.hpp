// Writes a run's outputs into --out DIR (DESIGN.md §6): updates.csv, gradients.csv, evals.csv,
// workers.csv and summary.json. Files are written to a temporary name and renamed, so a
// reader never sees a half-written file passed off as a result.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "stalesgd/engine/trainer_options.hpp"
#include "stalesgd/metrics/records.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

// The configuration as JSON (the "config" object of summary.json).
nlohmann::json options_to_json(const TrainerOptions& options);

// summary.json's content: config, iterations, seconds, staleness, gradient counts, final test
// error, and `theory` (the predicted seconds per iteration, null when unknown).
nlohmann::json run_summary(const TrainerOptions& options, const RunRecord& run,
                           const nlohmann::json& theory);

Status write_run_outputs(const std::filesystem::path& dir, const TrainerOptions& options,
                         const RunRecord& run, const nlohmann::json& theory);

}  // namespace stalesgd
