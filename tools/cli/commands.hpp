// The subcommands of the `stalesgd` CLI. args.cpp parses the command line (the only file that
// includes cxxopts) and calls one of these; each returns the process exit status.
#pragma once

#include <string>

namespace stalesgd::cli {

struct DataArgs {
  std::string dataset;
  std::string data_dir = "data";
  bool download = false;  // fetch only
};

int run_data_fetch(const DataArgs& args);
int run_data_info(const DataArgs& args);

// Prints "stalesgd: error: <message>" on one line to stderr; returns the exit status to use.
int fail(const std::string& message, int status = 1);

}  // namespace stalesgd::cli
