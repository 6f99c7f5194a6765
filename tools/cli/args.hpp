// Command-line parsing for every subcommand (cxxopts is confined to args.cpp, race_args.cpp and
// flag_parsing.cpp).
#pragma once

namespace stalesgd::cli {

// Parses argv, prints --help or a one-line usage error, or runs the subcommand.
int run_cli(int argc, char** argv);

}  // namespace stalesgd::cli
