// The race: an Experiment's runs in sequence, each into DIR/<slug>/ with the usual outputs,
// then one row per run: time to target error, error at the budget, seconds per iteration
// measured and predicted, mean staleness, wasted work. Written to DIR/results.csv and shown
// as a markdown table.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "stalesgd/experiment/experiment.hpp"
#include "stalesgd/metrics/records.hpp"
#include "stalesgd/rules/rule.hpp"
#include "stalesgd/theory/runtime.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

struct RaceRow {
  std::string label;
  std::string slug;
  RuleKind rule = RuleKind::kSync;
  int k = 0;  // the effective K
  std::uint64_t seed = 0;
  std::string clock;
  std::uint64_t iterations = 0;
  double wall_s = 0.0;
  std::optional<double> time_to_target_s;
  std::optional<double> final_test_error;
  double seconds_per_iteration = 0.0;
  std::optional<double> predicted_seconds_per_iteration;
  PredictionMethod predicted_method = PredictionMethod::kClosedForm;  // with a prediction
  double mean_staleness = 0.0;
  double p95_staleness = 0.0;
  std::uint64_t gradients_started = 0;
  std::uint64_t gradients_applied = 0;
  std::uint64_t gradients_cancelled = 0;
  double wasted_fraction = 0.0;  // cancelled / started: work thrown away
  StopReason stop_reason = StopReason::kNone;
  std::string divergence;  // with stop_reason "diverged": why (the run's outputs are kept, marked)
};

struct RaceOutcome {
  std::vector<RaceRow> rows;
  bool interrupted = false;  // Ctrl-C: the rows so far are written, the rest did not run
};

// `on_run_done(i, row)` is called after each run (for progress output).
Result<RaceOutcome> run_race(
    const Experiment& experiment, const std::filesystem::path& out_dir,
    const std::atomic<bool>* interrupt = nullptr,
    const std::function<void(std::size_t, const RaceRow&)>& on_run_done = {});

Status write_results_csv(const std::filesystem::path& path, const std::vector<RaceRow>& rows);
std::string results_markdown(const std::vector<RaceRow>& rows, double target_error);

}  // namespace stalesgd
