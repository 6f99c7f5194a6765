// The inputs of `stalesgd theory --fit RUN_DIR` (theory_fit.cpp): the run's summary.json and
// the duration_s column of its gradients.csv, each read with one-line errors.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "stalesgd/rules/rule.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd::cli {

// What the fit needs of the run's summary.json: its config, and its measured time.
struct RunInfo {
  int workers = 0;
  RuleSpec rule;
  std::string clock, delay, delay_mode;
  double compute_time_s = 0.0;
  double seconds_per_iteration = 0.0;
};

// RUN_DIR/summary.json's config and seconds_per_iteration; an Error when missing or damaged.
Result<RunInfo> read_summary(const std::filesystem::path& dir);
// RUN_DIR/gradients.csv's duration_s, by name; an Error for a missing file or column, or a
// damaged row.
Result<std::vector<double>> read_durations(const std::filesystem::path& dir);

}  // namespace stalesgd::cli
