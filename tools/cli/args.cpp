// Every subcommand's flags, defaults and --help text. The only translation unit that includes
// cxxopts: it fills plain structs (commands.hpp) and hands them to the commands.
#include "cli/args.hpp"

#include <cxxopts.hpp>
#include <fmt/format.h>

#include <string_view>

#include "cli/commands.hpp"

namespace stalesgd::cli {
namespace {

constexpr const char* kUsage =
    "stalesgd: a multi-threaded parameter-server trainer for the K-of-P SGD rules\n"
    "of Dutta et al., \"Slow and Stale Gradients Can Win the Race\" (AISTATS 2018).\n"
    "\n"
    "usage:\n"
    "  stalesgd data fetch mnist|fashion-mnist|cifar10 [--data-dir DIR] [--download]\n"
    "  stalesgd data info --dataset NAME [--data-dir DIR]\n"
    "\n"
    "Run `stalesgd <command> --help` for a command's flags. Docs: docs/ in the source tree.\n";

// Parses argv[first..] with `options`; unknown flags and stray arguments become usage errors.
cxxopts::ParseResult parse(cxxopts::Options& options, int argc, char** argv) {
  auto result = options.parse(argc, argv);
  if (!result.unmatched().empty()) {
    throw cxxopts::exceptions::parsing(
        fmt::format("unexpected argument '{}'", result.unmatched().front()));
  }
  return result;
}

int usage_error(const std::string& command, const std::string& what) {
  return fail(fmt::format("{}; see `stalesgd {} --help`", what, command), 2);
}

int data_command(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h") {
    fmt::print(
        "usage:\n"
        "  stalesgd data fetch mnist|fashion-mnist|cifar10 [--data-dir DIR] [--download]\n"
        "  stalesgd data info --dataset NAME [--data-dir DIR]\n");
    return argc < 2 ? 2 : 0;
  }
  const std::string sub = argv[1];
  const std::string name = "data " + sub;
  if (sub != "fetch" && sub != "info") {
    return fail(fmt::format("unknown data command '{}'; use `stalesgd data fetch` or "
                            "`stalesgd data info`",
                            sub),
                2);
  }
  cxxopts::Options options("stalesgd " + name,
                           sub == "fetch"
                               ? "Fetch a data set into DIR/<name>/ and verify it (idempotent)."
                               : "Print counts, image shape, class histogram and pixel mean/std.");
  options.add_options()
      ("data-dir", "Directory holding the data sets", cxxopts::value<std::string>()->default_value("data"))
      ("h,help", "Show this help");
  if (sub == "fetch") {
    options.add_options()
        ("dataset", "mnist | fashion-mnist | cifar10", cxxopts::value<std::string>())
        ("download", "cifar10 only: download the official tarball (needs internet)");
    options.parse_positional({"dataset"});
    options.positional_help("mnist|fashion-mnist|cifar10");
  } else {
    options.add_options()("dataset", "mnist | fashion-mnist | cifar10", cxxopts::value<std::string>());
  }
  try {
    auto r = parse(options, argc - 1, argv + 1);
    if (r.count("help")) {
      fmt::print("{}", options.help());
      return 0;
    }
    DataArgs args;
    if (!r.count("dataset")) {
      return usage_error(name, sub == "fetch" ? "name the data set to fetch (mnist, "
                                                "fashion-mnist or cifar10)"
                                              : "--dataset is required (mnist, fashion-mnist or "
                                                "cifar10)");
    }
    args.dataset = r["dataset"].as<std::string>();
    args.data_dir = r["data-dir"].as<std::string>();
    if (sub == "fetch") {
      args.download = r.count("download") > 0;
      return run_data_fetch(args);
    }
    return run_data_info(args);
  } catch (const cxxopts::exceptions::exception& e) {
    return usage_error(name, e.what());
  }
}

}  // namespace

int run_cli(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "{}", kUsage);
    return 2;
  }
  const std::string_view command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    fmt::print("{}", kUsage);
    return 0;
  }
  if (command == "--version") {
    fmt::print("stalesgd 0.1.0\n");
    return 0;
  }
  if (command == "data") return data_command(argc - 1, argv + 1);
  return fail(fmt::format("unknown command '{}'; run `stalesgd --help` for the commands", command), 2);
}

}  // namespace stalesgd::cli
