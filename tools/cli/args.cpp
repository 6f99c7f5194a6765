// Every subcommand's flags, defaults and --help text. The only translation unit that includes
// cxxopts: it fills plain structs (commands.hpp) and hands them to the commands.
#include "cli/args.hpp"

#include <cxxopts.hpp>
#include <fmt/format.h>

#include <string_view>
#include <vector>

#include "cli/commands.hpp"
#include "stalesgd/straggler/duration.hpp"

namespace stalesgd::cli {
namespace {

constexpr const char* kUsage =
    "stalesgd: a multi-threaded parameter-server trainer for the K-of-P SGD rules\n"
    "of Dutta et al., \"Slow and Stale Gradients Can Win the Race\" (AISTATS 2018).\n"
    "\n"
    "usage:\n"
    "  stalesgd data fetch mnist|fashion-mnist|cifar10 [--data-dir DIR] [--download]\n"
    "  stalesgd data info --dataset NAME [--data-dir DIR]\n"
    "  stalesgd train --dataset mnist --model softmax|mlp|lenet|cifar-cnn\n"
    "                 --rule sync|k-sync|k-batch-sync|async|k-async|k-batch-async\n"
    "                 --workers P --k K --batch 32 --lr 0.05 [--lr-rule ...]\n"
    "                 --delay 'exp:mean=10ms' [--delay-mode pad|add]\n"
    "                 --iterations N | --time 60s | --target-error 0.08\n"
    "                 [--clock real|virtual] [--eval-every 0.5s] [--seed S] --out DIR\n"
    "  stalesgd theory --rule R --workers P --k K --delay SPEC [--samples N] [--json]\n"
    "  stalesgd race   --config experiments/FILE.toml --out DIR [--dry-run]\n"
    "\n"
    "Run `stalesgd <command> --help` for a command's flags. Docs: docs/ in the source tree.\n";

// Parses argv with `options`; unknown flags and stray arguments become usage errors.
// cxxopts only knows one-letter options as short flags (-k), but the documented CLI spells
// K as --k: rewrite "--k" and "--k=V" to "-k" before parsing.
cxxopts::ParseResult parse(cxxopts::Options& options, int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (auto& a : args) {
    if (a == "--k") a = "-k";
    if (a.rfind("--k=", 0) == 0) a = "-k" + a.substr(4);
  }
  std::vector<char*> ptrs;
  for (auto& a : args) ptrs.push_back(a.data());
  auto result = options.parse(static_cast<int>(ptrs.size()), ptrs.data());
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

// A duration flag such as --time 60s; the error names the flag.
double duration_flag(const cxxopts::ParseResult& r, const std::string& flag) {
  const auto text = r[flag].as<std::string>();
  auto d = parse_duration(text);
  if (!d) throw cxxopts::exceptions::parsing(fmt::format("--{} '{}': {}", flag, text, d.error().message));
  return *d;
}

int train_command(int argc, char** argv) {
  cxxopts::Options options("stalesgd train",
                           "Train a model with a K-of-P parameter-server rule, straggler delays "
                           "and staleness tracking.\nDocs: docs/rules.md, docs/stragglers.md, "
                           "docs/models.md.");
  TrainerOptions defaults;
  // clang-format off
  options.add_options("Data and model")
      ("dataset", "mnist | fashion-mnist | cifar10", cxxopts::value<std::string>()->default_value(defaults.dataset))
      ("data-dir", "Directory holding the data sets", cxxopts::value<std::string>()->default_value("data"))
      ("model", "softmax | mlp | lenet | cifar-cnn", cxxopts::value<std::string>()->default_value(defaults.model.name))
      ("hidden", "mlp hidden layer sizes, e.g. 256,128 (default 128)", cxxopts::value<std::string>())
      ("l2", "L2 coefficient lambda (adds lambda/2 ||W||^2)", cxxopts::value<float>()->default_value("0"));
  options.add_options("Parameter server")
      ("rule", "sync | k-sync | k-batch-sync | async | k-async | k-batch-async", cxxopts::value<std::string>()->default_value("sync"))
      ("workers", "Number of worker threads P", cxxopts::value<int>()->default_value("1"))
      ("k", "(--k) Gradients per update K, 1 <= K <= P (sync: P, async: 1)", cxxopts::value<int>())
      ("batch", "Minibatch size per gradient", cxxopts::value<int>()->default_value("32"))
      ("lr", "Learning rate (the cap lr_max for --lr-rule dutta:...)", cxxopts::value<double>()->default_value("0.05"))
      ("lr-rule", "fixed | step:every=N,factor=F | exp:decay=D | inv-staleness | dutta:c=C", cxxopts::value<std::string>()->default_value("fixed"))
      ("delay", "Straggler delay spec, e.g. 'exp:mean=10ms' (docs/stragglers.md)", cxxopts::value<std::string>()->default_value("none"))
      ("delay-mode", "pad: a minibatch takes max(compute, X); add: compute + X", cxxopts::value<std::string>()->default_value("pad"))
      ("adasync-every", "AdaSync for k-sync/k-async: every T raise K to min(P, ceil(K0 sqrt(F0/Ft))), K0 = --k", cxxopts::value<std::string>())
      ("seed", "Seed for initialisation, sampling and delays", cxxopts::value<std::uint64_t>()->default_value("1"));
  options.add_options("Budget (the first reached stops the run)")
      ("iterations", "Number of server updates", cxxopts::value<std::uint64_t>())
      ("time", "Training time, e.g. 60s (virtual seconds with --clock virtual)", cxxopts::value<std::string>())
      ("target-error", "Stop once the test error is at most this, e.g. 0.08 (needs --iterations or --time as a cap)", cxxopts::value<double>());
  options.add_options("Engine and output")
      ("clock", "real: threads and sleeps; virtual: discrete-event clock, repeatable", cxxopts::value<std::string>()->default_value("real"))
      ("compute-time", "Virtual clock: the time one gradient's compute takes", cxxopts::value<std::string>()->default_value("0s"))
      ("sequential", "Plain SGD in one thread without a server (the P = 1 reference)")
      ("eval-every", "Time between parameter snapshots for evaluation", cxxopts::value<std::string>()->default_value("0.5s"))
      ("eval-samples", "Test samples per evaluation (0 = all)", cxxopts::value<std::size_t>()->default_value("0"))
      ("out", "Directory for updates.csv, gradients.csv, evals.csv, workers.csv, summary.json", cxxopts::value<std::string>())
      ("no-progress", "No progress line on stderr")
      ("h,help", "Show this help");
  // clang-format on
  try {
    auto r = parse(options, argc, argv);
    if (r.count("help")) {
      fmt::print("{}", options.help({"Data and model", "Parameter server",
                                     "Budget (the first reached stops the run)", "Engine and output"}));
      return 0;
    }
    TrainerOptions o;
    o.dataset = r["dataset"].as<std::string>();
    o.data_dir = r["data-dir"].as<std::string>();
    o.model.name = r["model"].as<std::string>();
    if (r.count("hidden")) {
      auto hidden = parse_hidden_sizes(r["hidden"].as<std::string>());
      if (!hidden) return fail(hidden.error().message, 2);
      o.model.hidden = *hidden;
    }
    o.model.l2 = r["l2"].as<float>();
    o.rule.name = r["rule"].as<std::string>();
    o.workers = r["workers"].as<int>();
    if (r.count("k")) {
      o.rule.k = r["k"].as<int>();
      if (o.rule.k < 1) return fail(fmt::format("--k {} must satisfy 1 <= K <= P", o.rule.k), 2);
    }
    o.batch = r["batch"].as<int>();
    o.lr = r["lr"].as<double>();
    o.lr_rule = r["lr-rule"].as<std::string>();
    o.delay = r["delay"].as<std::string>();
    const auto mode = r["delay-mode"].as<std::string>();
    if (mode != "pad" && mode != "add") {
      return fail(fmt::format("--delay-mode '{}' is not pad or add", mode), 2);
    }
    o.delay_mode = mode == "pad" ? DelayMode::kPad : DelayMode::kAdd;
    o.seed = r["seed"].as<std::uint64_t>();
    if (r.count("adasync-every")) o.adasync_every_s = duration_flag(r, "adasync-every");
    if (r.count("iterations")) o.iterations = r["iterations"].as<std::uint64_t>();
    if (r.count("time")) o.time_s = duration_flag(r, "time");
    if (r.count("target-error")) o.target_error = r["target-error"].as<double>();
    const auto clock = r["clock"].as<std::string>();
    if (clock != "real" && clock != "virtual") {
      return fail(fmt::format("--clock '{}' is not real or virtual", clock), 2);
    }
    o.clock = clock == "real" ? ClockKind::kReal : ClockKind::kVirtual;
    o.compute_time_s = duration_flag(r, "compute-time");
    o.sequential = r.count("sequential") > 0;
    o.eval_every_s = duration_flag(r, "eval-every");
    o.eval_test_samples = r["eval-samples"].as<std::size_t>();
    if (r.count("out")) o.out_dir = r["out"].as<std::string>();
    o.progress = r.count("no-progress") == 0;
    return run_train(o);
  } catch (const cxxopts::exceptions::exception& e) {
    return usage_error("train", e.what());
  }
}

int theory_command(int argc, char** argv) {
  cxxopts::Options options("stalesgd theory",
                           "Expected seconds per iteration of a K-of-P rule under a delay spec: the "
                           "closed form of\nDutta et al. 2018 where one exists, and a Monte-Carlo "
                           "simulation of the same rule for any spec.\nDocs: docs/theory.md.");
  // clang-format off
  options.add_options()
      ("rule", "sync | k-sync | k-batch-sync | async | k-async | k-batch-async (default: all, K = 1, 2, 4, ..., P)", cxxopts::value<std::string>())
      ("workers", "Number of workers P", cxxopts::value<int>()->default_value("8"))
      ("k", "(--k) Gradients per update K, 1 <= K <= P", cxxopts::value<int>())
      ("delay", "Delay spec, e.g. 'exp:mean=20ms' (docs/stragglers.md)", cxxopts::value<std::string>())
      ("delay-mode", "pad | add (with no compute time modelled they agree)", cxxopts::value<std::string>()->default_value("pad"))
      ("samples", "Simulated iterations per Monte-Carlo estimate", cxxopts::value<std::uint64_t>()->default_value("20000"))
      ("seed", "Seed of the simulation", cxxopts::value<std::uint64_t>()->default_value("1"))
      ("json", "Print JSON instead of a table")
      ("h,help", "Show this help");
  // clang-format on
  try {
    auto r = parse(options, argc, argv);
    if (r.count("help")) {
      fmt::print("{}", options.help());
      return 0;
    }
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
    if (!r.count("delay")) return usage_error("theory", "--delay is required, e.g. --delay exp:mean=20ms");
    a.delay = r["delay"].as<std::string>();
    const auto mode = r["delay-mode"].as<std::string>();
    if (mode != "pad" && mode != "add") return fail(fmt::format("--delay-mode '{}' is not pad or add", mode), 2);
    a.delay_mode = mode == "pad" ? DelayMode::kPad : DelayMode::kAdd;
    a.samples = r["samples"].as<std::uint64_t>();
    if (a.samples < 100) return fail(fmt::format("--samples {} is too few; use at least 100", a.samples), 2);
    a.seed = r["seed"].as<std::uint64_t>();
    a.json = r.count("json") > 0;
    return run_theory(a);
  } catch (const cxxopts::exceptions::exception& e) {
    return usage_error("theory", e.what());
  }
}

int race_command(int argc, char** argv) {
  cxxopts::Options options("stalesgd race",
                           "Run the training runs of a TOML experiment in sequence, each into "
                           "DIR/<run>/, then print\nthe results table (time to target error, error "
                           "at the budget, seconds per iteration measured\nand predicted, staleness, "
                           "wasted work) and write DIR/results.csv. Docs: docs/experiments.md.");
  // clang-format off
  options.add_options()
      ("config", "Experiment file, e.g. experiments/quickstart.toml", cxxopts::value<std::string>())
      ("out", "Output directory", cxxopts::value<std::string>())
      ("dry-run", "Check the file and list the runs without running them")
      ("h,help", "Show this help");
  // clang-format on
  try {
    auto r = parse(options, argc, argv);
    if (r.count("help")) {
      fmt::print("{}", options.help());
      return 0;
    }
    if (!r.count("config")) return usage_error("race", "--config FILE is required");
    RaceArgs a;
    a.config = r["config"].as<std::string>();
    a.dry_run = r.count("dry-run") > 0;
    if (!r.count("out") && !a.dry_run) return usage_error("race", "--out DIR is required");
    if (r.count("out")) a.out = r["out"].as<std::string>();
    return run_race(a);
  } catch (const cxxopts::exceptions::exception& e) {
    return usage_error("race", e.what());
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
  if (command == "train") return train_command(argc - 1, argv + 1);
  if (command == "theory") return theory_command(argc - 1, argv + 1);
  if (command == "race") return race_command(argc - 1, argv + 1);
  return fail(fmt::format("unknown command '{}'; run `stalesgd --help` for the commands", command), 2);
}

}  // namespace stalesgd::cli
