// Experiment: a race read from a TOML file — what the runs share (data set, model, workers,
// delays, budget, seeds, ...) and the list of runs (rule, K, learning-rate rule, label), each
// resolved to a complete ResolvedRun. Every error names the file, the line and the key.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "stalesgd/config/resolved_run.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

struct ExperimentRun {
  std::string label;  // as written, with " (seed N)" when the experiment has several seeds
  std::string slug;   // the run's subfolder name: label in lower case, [a-z0-9-] only, unique
  ResolvedRun run;    // validated and parsed once, when the file is loaded
  const TrainerOptions& options() const { return run.options(); }
};

struct Experiment {
  std::string name;         // `name` key, or the file's stem
  std::string description;  // `description` key (optional)
  std::vector<ExperimentRun> runs;
};

// Reads and validates the whole file (every run's options pass validate()). Keys and their
// meaning: docs/experiments.md. Trace files in delay specs resolve against the directory of the
// file; data_dir, like the CLI's --data-dir, against the current directory.
Result<Experiment> load_experiment(const std::filesystem::path& path);

}  // namespace stalesgd
