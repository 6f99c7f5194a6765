// Experiment: a race read from a TOML file — what the runs share (data set, model, workers,
// delays, budget, seeds, ...) and the list of runs (rule, K, learning-rate rule, label), a key
// given as a list sweeping it, each run resolved to a complete ResolvedRun. Every error names
// the file, the line and the key.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "stalesgd/config/resolved_run.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

struct ExperimentRun {
  std::string label;  // placeholders filled in; " (k=4)", " (seed N)" for swept keys it omits
  std::string slug;   // the run's subfolder name: label in lower case, [a-z0-9-] only, unique
  ResolvedRun run;    // validated and parsed once, when the file is loaded
  const TrainerOptions& options() const { return run.options(); }
};

struct Experiment {
  std::string name;                 // `name` key, or the file's stem
  std::string description;          // `description` key (optional)
  std::vector<ExperimentRun> runs;  // in the order of docs/experiments.md, "Sweeps"
  std::string source_text;          // the file's bytes, as parsed (a race copies them to --out)
  std::vector<std::string> set;     // the `race --set` arguments applied to every run
};

// Reads and validates the whole file (every run's options pass validate()). Keys and their
// meaning: docs/experiments.md. Trace files in delay specs resolve against the directory of the
// file; data_dir, like the CLI's --data-dir, against the current directory. `set` holds
// `race --set` arguments ("k=4", "k=[1,2,4]"), each replacing its key in every run.
Result<Experiment> load_experiment(const std::filesystem::path& path,
                                   const std::vector<std::string>& set = {});

// `race --only`: keeps the runs whose label or slug matches one of the shell patterns
// (fnmatch), in their order; slugs stay those of the whole file. The error, when no run
// matches, lists the labels.
Status select_runs(Experiment& experiment, const std::vector<std::string>& patterns);

}  // namespace stalesgd
