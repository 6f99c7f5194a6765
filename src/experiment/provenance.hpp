// What a race keeps of how it was asked for: the experiment file, byte for byte, and every
// run's resolved options (docs/experiments.md, "What a race writes").
#pragma once

#include <filesystem>

#include "stalesgd/experiment/experiment.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

inline constexpr const char* kExperimentCopy = "experiment.toml";
inline constexpr const char* kRunsFile = "runs.csv";

// Writes DIR/experiment.toml (the file's bytes as loaded) and DIR/runs.csv (label, slug and
// every resolved option of each run, after --set and --only), each whole or not at all.
Status write_race_provenance(const Experiment& experiment, const std::filesystem::path& dir);

}  // namespace stalesgd
