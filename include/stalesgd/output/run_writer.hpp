// Writes a run's outputs into --out DIR (docs/outputs.md): updates.csv, gradients.csv,
// evals.csv, workers.csv and summary.json. Files are written to a temporary name and renamed,
// so a reader never sees a half-written file passed off as a result.
#pragma once

#include <filesystem>
#include <optional>

#include "stalesgd/config/resolved_run.hpp"
#include "stalesgd/metrics/records.hpp"
#include "stalesgd/theory/runtime.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

// `theory`: the runtime theory's prediction for the run (summary.json's "theory"; null when none).
Status write_run_outputs(const std::filesystem::path& dir, const ResolvedRun& config,
                         const RunRecord& run, const std::optional<RuntimePrediction>& theory);

}  // namespace stalesgd
