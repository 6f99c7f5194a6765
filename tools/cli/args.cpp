// The subcommands' flags, defaults and --help text (train's in train_args.cpp, race's in
// race_args.cpp): fills plain
// structs (commands.hpp) and hands them to the commands.
#include "cli/args.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "cli/commands.hpp"
#include "cli/flag_parsing.hpp"
#include "cli/man_page.hpp"
#include "cli/theory_machine.hpp"
// The option table is internal to the library (src/); the CLI target sees include/ only.
#include "config/option_table.hpp"
#include "config/plugins.hpp"
#include "stalesgd/rules/rule_registry.hpp"
#include "stalesgd/straggler/duration.hpp"
#include "stalesgd/version.hpp"
#include "util/fault_point.hpp"
#include "util/logging.hpp"

namespace stalesgd::cli {
namespace {

// The top-level usage; --rule lists the registry's rules (rules/rule_registry.hpp).
std::string usage() {
  std::string rules = rule_choices();
  std::erase(rules, ' ');
  return fmt::format(
      "stalesgd: a multi-threaded parameter-server trainer for the K-of-P SGD rules\n"
      "of Dutta et al., \"Slow and Stale Gradients Can Win the Race\" (AISTATS 2018).\n"
      "\n"
      "usage:\n"
      "  stalesgd data fetch mnist|fashion-mnist|cifar10 [--data-dir DIR] [--download]\n"
      "  stalesgd data info --dataset NAME|npz:PATH [--data-dir DIR]\n"
      "  stalesgd train --dataset mnist|npz:PATH\n"
      "                 --model softmax|mlp|lenet|cifar-cnn|torchscript:PATH\n"
      "                 --rule {}\n"
      "                 --workers P --k K --batch 32 --lr 0.05 [--lr-rule ...]\n"
      "                 --delay 'exp:mean=10ms' [--delay-mode pad|add]\n"
      "                 --iterations N | --time 60s | --target-error 0.08\n"
      "                 [--clock real|virtual] [--eval-every 0.5s] [--seed S] --out DIR\n"
      "  stalesgd theory --rule R --workers P --k K --delay SPEC [--samples N] [--json]\n"
      "  stalesgd theory --error --model softmax --l2 1e-3 --rule R --delay SPEC [--budget T,...]\n"
      "  stalesgd theory --fit RUN_DIR [--rule R --k K] [--samples N] [--json]\n"
      "  stalesgd theory ... [--cores N] [--server-time auto|D] [--link SPEC] [--shards S]\n"
      "                  [--machine FILE] (a machine past the free one: docs/machine.md)\n"
      "  stalesgd calibrate --model M --out FILE [--dataset D] [--batch B]\n"
      "  stalesgd race   --config experiments/FILE.toml --out DIR [--dry-run] [--force | "
      "--resume]\n"
      "                  [--set KEY=VALUE ...] [--only PATTERN ...] [--data-dir DIR] [--jobs N]\n"
      "                  [--checkpoint-every T]\n"
      "  stalesgd eval   --model M [--hidden H] --model-file PATH.npy --dataset D\n"
      "  stalesgd export --model torchscript:PATH --model-file PATH.npy [--into PATH]\n"
      "                  --out FILE.pt [--state-dict FILE.pth]\n"
      "  stalesgd serve  DIR [--port 6006] [--host 127.0.0.1]\n"
      "\n"
      "  stalesgd --version | --man (this manual page in roff: stalesgd --man | man -l -)\n"
      "\n"
      "Run `stalesgd <command> --help` for a command's flags. Docs: docs/ in the source tree,\n"
      "share/doc/stalesgd/ where stalesgd is installed (docs/cli.md: every command and flag).\n",
      rules);
}

int data_command(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h") {
    fmt::print(
        "usage:\n"
        "  stalesgd data fetch mnist|fashion-mnist|cifar10 [--data-dir DIR] [--download]\n"
        "  stalesgd data info --dataset NAME|npz:PATH [--data-dir DIR]\n");
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
  options.add_options()("data-dir", "Directory holding the data sets",
                        cxxopts::value<std::string>()->default_value("data"))("h,help",
                                                                              "Show this help");
  add_logging_options(options);
  if (sub == "fetch") {
    options.add_options()("dataset", "mnist | fashion-mnist | cifar10",
                          cxxopts::value<std::string>())(
        "download", "cifar10 only: download the official tarball (needs internet)");
    options.parse_positional({"dataset"});
    options.positional_help("mnist|fashion-mnist|cifar10");
  } else {
    options.add_options()("dataset", "mnist | fashion-mnist | cifar10 | npz:PATH (an .npz file)",
                          cxxopts::value<std::string>());
  }
  try {
    auto r = parse(options, argc - 1, argv + 1);
    if (auto done = help_or_logging(options, r)) return *done;
    DataArgs args;
    if (!r.count("dataset")) {
      return usage_error(name, sub == "fetch" ? "name the data set to fetch (mnist, "
                                                "fashion-mnist or cifar10)"
                                              : "--dataset is required (mnist, fashion-mnist, "
                                                "cifar10 or npz:PATH)");
    }
    args.dataset = r["dataset"].as<std::string>();
    args.data_dir = r["data-dir"].as<std::string>();
    if (sub == "fetch") {
      args.download = r.count("download") > 0;
      return run_data_fetch(args);
    }
    return run_data_info(args);
  } catch (const cxxopts::exceptions::exception& e) {
    return usage_error(name, e);
  }
}

int theory_command(int argc, char** argv) {
  // `theory --error` has flags of its own (theory_error.cpp).
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--error") return theory_error_command(argc, argv);
  }
  cxxopts::Options options(
      "stalesgd theory",
      "Expected seconds per iteration of a K-of-P rule under a delay spec: the "
      "closed form of\nDutta et al. 2018 where one exists, and a Monte-Carlo "
      "simulation of the same rule for any spec.\nDocs: docs/theory.md.");
  // clang-format off
  options.add_options()
      ("rule", rule_choices() + " (default: those without flags of their own, K = 1, 2, 4, ..., P)", cxxopts::value<std::string>())
      ("workers", "Number of workers P", cxxopts::value<int>()->default_value("8"))
      ("k", "(--k) Gradients per update K, 1 <= K <= P", cxxopts::value<int>())
      ("delay", "Delay spec, e.g. 'exp:mean=20ms' (docs/stragglers.md)", cxxopts::value<std::string>())
      ("samples", "Simulated iterations per Monte-Carlo estimate", cxxopts::value<std::uint64_t>()->default_value("20000"))
      ("seed", "Seed of the simulation", cxxopts::value<std::uint64_t>()->default_value("1"))
      ("json", "Print JSON instead of a table")
      ("error", "Predict error against wallclock instead (see `stalesgd theory --error --help`)")
      ("fit", "RUN_DIR: fit its minibatch durations (gradients.csv) and predict every rule from the fit", cxxopts::value<std::string>())
      ("model", "The model that sizes the link's messages and that --server-time auto measures", cxxopts::value<std::string>())
      ("saturation-max", "The largest P the server's saturation scan tries", cxxopts::value<int>()->default_value("1024"))
      ("h,help", "Show this help");
  // clang-format on
  // The machine's flags and the rules' own options are train's (the option table), so their
  // values read the same.
  add_train_flags(options, kTheoryMachineFlags);
  add_train_flags(options, {"plugin", "delay-mode"});  // the plug-in loaded already (run_cli)
  const std::vector<std::string> rule_flags = rule_option_names();
  add_train_flags(options, rule_flags);
  add_logging_options(options);
  try {
    auto r = parse(options, argc, argv);
    if (auto done = help_or_logging(options, r)) return *done;
    TheoryArgs a;
    if (r.count("rule")) a.rule = r["rule"].as<std::string>();
    a.workers = r["workers"].as<int>();
    if (a.workers < 1 || a.workers > 4096) {
      return fail(fmt::format("--workers {} is out of range; use 1 to 4096", a.workers), 2);
    }
    if (r.count("k")) {
      a.k = r["k"].as<int>();
      if (a.k < 1) return fail(fmt::format("--k {} must satisfy 1 <= K <= P", a.k), 2);
      if (a.rule.empty()) return fail("--k needs --rule", 2);
    }
    {
      TrainerOptions given;
      if (auto s = set_train_flags(r, rule_flags, given); !s) return fail(s.error().message, 2);
      a.params = given.rule.params;
    }
    if (r.count("fit")) {  // theory --fit RUN_DIR: theory_fit.cpp
      if (r.count("delay") || r.count("workers") || r.count("delay-mode")) {
        return fail(
            "--fit takes P and the delays from the run; drop --workers, --delay and "
            "--delay-mode",
            2);
      }
      a.samples = r["samples"].as<std::uint64_t>();
      a.seed = r["seed"].as<std::uint64_t>();
      a.json = r.count("json") > 0;
      return run_theory_fit(r["fit"].as<std::string>(), a);
    }
    if (!r.count("delay"))
      return usage_error("theory", "--delay is required, e.g. --delay exp:mean=20ms");
    a.delay = r["delay"].as<std::string>();
    {
      TrainerOptions given;  // --delay-mode read as train reads it (the option table)
      if (auto s = set_train_flags(r, {"delay-mode"}, given); !s) return fail(s.error().message, 2);
      a.delay_mode = given.delay_mode;
    }
    a.samples = r["samples"].as<std::uint64_t>();
    if (a.samples < 100)
      return fail(fmt::format("--samples {} is too few; use at least 100", a.samples), 2);
    a.seed = r["seed"].as<std::uint64_t>();
    a.json = r.count("json") > 0;
    if (auto s = theory_machine_flags(r, a); !s) return fail(s.error().message, 2);
    return run_theory(a);
  } catch (const cxxopts::exceptions::exception& e) {
    return usage_error("theory", e);
  }
}

}  // namespace

int run_cli(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "{}", usage());
    return 2;
  }
  const std::string_view command = argv[1];
  logging::set_stderr_level(spdlog::level::info);
  const std::vector<std::string> command_line(argv, argv + argc);
  if (command == "--help" || command == "-h" || command == "help") {
    fmt::print("{}", usage());
    return 0;
  }
  if (command == "--man") return print_man_page(usage());  // stalesgd(1), in roff
  if (command == "--version") {
    fmt::print("stalesgd {} (commit {})\n", version(), git_commit());
    return 0;
  }
  fault_point("command");
  // --plugin first, whatever the command: its rules' names and flags are then known to the
  // options below (--help included), and every MPI rank, started with these words, loads it too.
  if (auto s = load_plugins_in_args(command_line); !s) return fail(s.error().message, 2);
  if (command == "data") return data_command(argc - 1, argv + 1);
  if (command == "train") return train_command(argc - 1, argv + 1, command_line);
  if (command == "theory") return theory_command(argc - 1, argv + 1);
  if (command == "race") return race_command(argc - 1, argv + 1, command_line);
  if (command == "eval") return eval_command(argc - 1, argv + 1);
  if (command == "export") return export_command(argc - 1, argv + 1);
  if (command == "calibrate") return calibrate_command(argc - 1, argv + 1);
  if (command == "serve") return serve_command(argc - 1, argv + 1);
  return fail(fmt::format("unknown command '{}'; run `stalesgd --help` for the commands", command),
              2);
}

}  // namespace stalesgd::cli
