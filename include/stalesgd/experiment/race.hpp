// The race: an Experiment's runs, each into DIR/<slug>/ with the usual outputs (virtual-clock
// runs several at a time with RaceSettings::jobs), then one row per run: time to target error,
// error at the budget, seconds per iteration measured and predicted, mean staleness, wasted
// work. Written to DIR/results.csv and shown as a markdown table; DIR/experiment.toml and
// DIR/runs.csv record the file and every run's options.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "stalesgd/data/dataset.hpp"
#include "stalesgd/experiment/experiment.hpp"
#include "stalesgd/metrics/records.hpp"
#include "stalesgd/rules/rule.hpp"
#include "stalesgd/theory/runtime.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

struct RaceRow {
  std::string label;
  std::string slug;
  std::string rule;  // the registered rule
  int k = 0;         // the effective K
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
  // The run's resolved options, (key, value) in the option table's order, values as the CLI
  // takes them ("500ms"): results.csv's config columns.
  std::vector<std::pair<std::string, std::string>> config;
};

struct RaceOutcome {
  std::vector<RaceRow> rows;
  bool interrupted = false;  // Ctrl-C: the rows so far are written, the rest did not run
};

// The data sets of a race, each loaded once: (data set, data dir) -> its samples.
using RaceData = std::map<std::pair<std::string, std::string>, Dataset>;

// Everything about the runs a race can check before it trains anything, so that a bad run
// stops the race before the first run rather than after it (docs/experiments.md): an mpi
// run needs a build with MPI and whole worker ranks; every run's data set loads, its model
// builds for that data set's images, and its batch fits in the training set. The error names
// the run's label. Returns the data sets it loaded (`--dry-run` runs it too).
Result<RaceData> check_race(const Experiment& experiment);

// What a race does with an --out folder that already holds files.
enum class ExistingOut {
  kRefuse,     // the default: old and new runs would mix in one results table
  kOverwrite,  // --force: write into it; files of the same names are replaced
  kResume,     // --resume: finish the race that is there
};

// How a race runs its runs (docs/experiments.md, docs/reliability.md).
struct RaceSettings {
  // Keep the runs that finished (their summary.json says so); continue a run that has a
  // checkpoint from it; start the others afresh.
  bool resume = false;
  // With resume: a kept run (finished, or cut with a checkpoint) whose settings differ from the
  // experiment file's is run again from its start instead of refused (--resume --force).
  bool rerun_changed = false;
  // Every in-process run writes a checkpoint this often (its own clock); 0 = never.
  double checkpoint_every_s = 0.0;
  // Runs at a time. Only runs that may_run_alongside() share the time: they go first, then
  // the others one at a time. The outputs are those of jobs = 1.
  int jobs = 1;
  // Progress on stderr (docs/cli.md, "Logging and progress"): each run's line with "[i/n]
  // label" and the race's ETA. Off: none on stderr; each run's run.log records it anyway.
  bool progress = false;
  double progress_every_s = 10.0;  // seconds between progress log lines
  // argv of the command that started the race: each run's summary.json records it with the
  // times and host ("provenance"); empty: no provenance.
  std::vector<std::string> command_line{};
};

// Whether a run's outputs stay the same when other runs share the machine: a virtual-clock
// run of this process. A real-clock run's wallclock would be disturbed, and an mpi run is
// real-clock processes of its own.
bool may_run_alongside(const ExperimentRun& run);

// The order in which run_race starts the runs with `jobs` at a time: with jobs > 1 the runs
// that may_run_alongside() first, then the others, each group in the experiment's order. The
// CLI prints the ended runs in this order.
std::vector<std::size_t> start_order(const Experiment& experiment, int jobs);

// Refuses an --out that is not a folder, and one that holds files unless `existing` allows it;
// an --out that does not exist yet is fine.
Status check_race_out(const std::filesystem::path& out, ExistingOut existing);

// `on_run_done(i, row)` is called after each run i (for progress output), one call at a time;
// with jobs > 1 from the thread that ran it, in the order the runs end (start_order() gives the
// order they started in). Runs check_race first:
// nothing is created or trained when it fails. Once `interrupt` is set no run starts (the
// runs in progress stop on it); the rows of the runs that ran are written.
Result<RaceOutcome> run_race(
    const Experiment& experiment, const std::filesystem::path& out_dir,
    const std::atomic<bool>* interrupt = nullptr,
    const std::function<void(std::size_t, const RaceRow&)>& on_run_done = {},
    const RaceSettings& settings = {});

// The same with the data check_race(experiment) returned (the CLI checks before it prints).
Result<RaceOutcome> run_race(
    const Experiment& experiment, RaceData data, const std::filesystem::path& out_dir,
    const std::atomic<bool>* interrupt = nullptr,
    const std::function<void(std::size_t, const RaceRow&)>& on_run_done = {},
    const RaceSettings& settings = {});

// results.csv: the row's columns, then model, workers, delay, lr, batch, engine and every other
// config key whose value differs between the rows (docs/experiments.md).
Status write_results_csv(const std::filesystem::path& path, const std::vector<RaceRow>& rows);
std::string results_markdown(const std::vector<RaceRow>& rows, double target_error);

}  // namespace stalesgd
