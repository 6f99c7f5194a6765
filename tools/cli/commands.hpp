// The subcommands of the `stalesgd` CLI. args.cpp parses the command line (the only file that
// includes cxxopts) and calls one of these; each returns the process exit status.
#pragma once

#include <string>

#include "stalesgd/engine/trainer_options.hpp"

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

// Prints "stalesgd: error: <message>" on one line to stderr; returns the exit status to use.
int fail(const std::string& message, int status = 1);

}  // namespace stalesgd::cli
