// The subcommands of the `stalesgd` CLI. args.cpp parses the command line (the only file that
// includes cxxopts) and calls one of these; each returns the process exit status.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "output/checkpoint.hpp"
#include "output/run_journal.hpp"
#include "stalesgd/config/trainer_options.hpp"

namespace stalesgd::cli {

struct DataArgs {
  std::string dataset;
  std::string data_dir = "data";
  bool download = false;  // fetch only
};

int run_data_fetch(const DataArgs& args);
int run_data_info(const DataArgs& args);

// Where a resumed run continues: its checkpoint's payload and header (the journal offsets,
// the run's identity).
struct ResumePoint {
  std::string payload;
  CheckpointHeader header;
};

// `stalesgd train`: validates, loads the data, trains, writes --out, prints a summary table.
// Exit status 0, 1 on bad input, a failed write or divergence, 130/143 when interrupted.
// `command_line`: argv as given, for summary.json's provenance.
int run_train(const TrainerOptions& options, const std::optional<ResumePoint>& resume = {},
              const std::vector<std::string>& command_line = {});

// `stalesgd train --resume DIR`: `flags` are the flags given (without "--"); each other than
// --resume, --no-progress, --progress-every, --data-dir and an --out naming DIR must agree with
// the checkpoint.
int run_resume(const TrainerOptions& given, const std::vector<std::string>& flags,
               const std::vector<std::string>& command_line = {});

struct TheoryArgs {
  std::string rule;  // empty: every rule for K = 1, 2, 4, ..., P
  int workers = 8;
  int k = 0;
  RuleParams params{};  // the rule's own options (train's option table reads them)
  std::string delay;
  DelayMode delay_mode = DelayMode::kPad;
  std::uint64_t samples = 20000;  // simulated iterations per Monte-Carlo estimate
  std::uint64_t seed = 1;
  bool json = false;
  // The machine (docs/machine.md): the options' fields that train --clock virtual reads too
  // (cores, server_time, link, shards, machine, compute_time_s, model, dataset, data_dir).
  TrainerOptions machine;
  int saturation_max = 1024;  // --saturation-max: the largest P the saturation scan tries
};

// `stalesgd calibrate` (calibrate_command.cpp): a machine file for --machine (docs/machine.md).
int calibrate_command(int argc, char** argv);

// `stalesgd theory`: closed form and Monte-Carlo E[T] per iteration, and E[T_sync]/E[T_async].
int run_theory(const TheoryArgs& args);

// `stalesgd theory --fit RUN_DIR` (theory_fit.cpp): fits the run's minibatch durations and
// predicts every rule's time per iteration from the fit. `theory` holds --rule, --k, --samples,
// --seed and --json (its --workers and --delay come from the run).
int run_theory_fit(const std::string& run_dir, const TheoryArgs& theory);

struct RaceArgs {
  std::string config;
  std::string out;
  bool dry_run = false;             // check the runs, list them and their folders, run nothing
  bool force = false;               // write into an --out that holds files
  bool resume = false;              // finish the race already in `out`
  double checkpoint_every_s = 0.0;  // each run checkpoints this often; 0 = never
  bool progress = true;             // progress on stderr (--no-progress: none)
  double progress_every_s = 10.0;   // seconds between progress log lines
  std::vector<std::string> command_line;  // argv as given, for each run's summary.json
  std::vector<std::string> set;           // --set key=value, in the order given: every run
  std::vector<std::string> only;          // --only PATTERN: the runs whose label or slug matches
  std::string data_dir;                   // --data-dir: every run's data_dir; empty = the file's
  int jobs = 1;                           // --jobs: virtual-clock runs at a time
};

// `stalesgd race`: every run of a TOML experiment, outputs per run, results.csv and a table.
int run_race(const RaceArgs& args);

// `stalesgd serve DIR` (serve_command.cpp): a local web page over the runs in DIR, live while
// they go. Exit status 1 when DIR holds no runs or the port is taken, 130/143 when stopped.
int serve_command(int argc, char** argv);

// Prints "stalesgd: error: <message>" on one line to stderr; returns the exit status to use.
int fail(const std::string& message, int status = 1);

}  // namespace stalesgd::cli
