// The subcommands of the `stalesgd` CLI. args.cpp parses the command line (the only file that
// includes cxxopts) and calls one of these; each returns the process exit status.
#pragma once

#include <cstdint>
#include <string>

#include "stalesgd/config/trainer_options.hpp"

namespace stalesgd::cli {

struct DataArgs {
  std::string dataset;
  std::string data_dir = "data";
  bool download = false;  // fetch only
};

int run_data_fetch(const DataArgs& args);
int run_data_info(const DataArgs& args);

// `stalesgd train`: validates, loads the data, trains, writes --out, prints a summary table.
// Exit status 0, 1 on bad input or divergence, 130 when interrupted by Ctrl-C.
int run_train(const TrainerOptions& options);

struct TheoryArgs {
  std::string rule;  // empty: every rule for K = 1, 2, 4, ..., P
  int workers = 8;
  int k = 0;
  std::string delay;
  DelayMode delay_mode = DelayMode::kPad;
  std::uint64_t samples = 20000;  // simulated iterations per Monte-Carlo estimate
  std::uint64_t seed = 1;
  bool json = false;
};

// `stalesgd theory`: closed form and Monte-Carlo E[T] per iteration, and E[T_sync]/E[T_async].
int run_theory(const TheoryArgs& args);

struct RaceArgs {
  std::string config;
  std::string out;
  bool dry_run = false;  // check the runs, list them and their folders, run nothing
  bool force = false;    // write into an --out that holds files
};

// `stalesgd race`: every run of a TOML experiment, outputs per run, results.csv and a table.
int run_race(const RaceArgs& args);

// Prints "stalesgd: error: <message>" on one line to stderr; returns the exit status to use.
int fail(const std::string& message, int status = 1);

}  // namespace stalesgd::cli
