// Entry point of the `stalesgd` CLI: parses, dispatches, and turns every failure into one line.
#include <cstdio>
#include <exception>

#include <fmt/format.h>

#include "cli/args.hpp"
#include "cli/commands.hpp"

namespace stalesgd::cli {

int fail(const std::string& message, int status) {
  fmt::print(stderr, "stalesgd: error: {}\n", message);
  return status;
}

}  // namespace stalesgd::cli

int main(int argc, char** argv) {
  try {
    return stalesgd::cli::run_cli(argc, argv);
  } catch (const std::exception& e) {
    // Only bugs and worker failures reach here; still one line, still non-zero.
    return stalesgd::cli::fail(fmt::format("internal error: {}", e.what()), 3);
  }
}
