// `stalesgd race`'s flags: the experiment file, --out, the sweep flags (--set, --only, --data-dir,
// --jobs), resuming, progress and logging; fills RaceArgs for run_race (race_command.cpp).
#include <algorithm>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/flag_parsing.hpp"
#include "config/plugins.hpp"
#include "experiment/setting.hpp"
#include "stalesgd/straggler/duration.hpp"

namespace stalesgd::cli {

int race_command(int argc, char** argv, const std::vector<std::string>& command_line) {
  cxxopts::Options options(
      "stalesgd race",
      "Run the training runs of a TOML experiment (a key given as a list sweeps it), each into "
      "DIR/<run>/,\nthen print the results table (time to target error, error at the budget, "
      "seconds per iteration\nmeasured and predicted, staleness, wasted work) and write "
      "DIR/results.csv, DIR/runs.csv and\nDIR/experiment.toml. Docs: docs/experiments.md.");
  // clang-format off
  options.add_options()
      ("config", "Experiment file, e.g. experiments/quickstart.toml", cxxopts::value<std::string>())
      ("out", "Output directory", cxxopts::value<std::string>())
      ("set", "KEY=VALUE: set a key of the file in every run, VALUE as train's flag takes it (time=5s); KEY=[V1,V2] or KEY=V1,V2 sweeps it (repeatable; a bare KEY=VALUE after the flags is a --set too)", cxxopts::value<std::string>())
      ("plugin", "Load the rules, models and delay families of these plug-ins (.so files, colons between several) for every run: as --set plugin=PATHS, loaded first", cxxopts::value<std::string>())
      ("only", "Run only the runs whose label or slug matches this shell pattern, e.g. 'k-async*' (repeatable)", cxxopts::value<std::string>())
      ("data-dir", "Directory holding the data sets, for every run (as train's --data-dir; replaces the file's data_dir)", cxxopts::value<std::string>())
      ("jobs", "Virtual-clock runs at a time; real-clock runs still go one at a time", cxxopts::value<int>()->default_value("1"))
      ("dry-run", "Check the file, every run's data set and model, and list the runs in a table without running them")
      ("force", "Write into an --out that already holds files (files of the same names are replaced); with --resume, run again the kept runs whose settings the experiment file changed")
      ("resume", "Finish the race in --out: keep the runs that finished, continue the one with a checkpoint, run the rest")
      ("checkpoint-every", "Each run writes a checkpoint this often (its clock), so --resume continues it; 0s = never", cxxopts::value<std::string>()->default_value("0s"))
      ("progress-every", "Seconds between progress lines in the log (stderr when it is not a terminal, and each run.log)", cxxopts::value<std::string>()->default_value("10s"))
      ("no-progress", "No progress on stderr (each run.log still records it)")
      ("h,help", "Show this help");
  // clang-format on
  add_logging_options(options);
  try {
    std::vector<std::string> args(argv, argv + argc);
    RaceArgs a;
    auto set = take_repeated(args, "set");
    if (!set) return usage_error("race", set.error().message);
    static const std::vector<std::string> switches{
        "--dry-run", "--force", "--resume", "--no-progress", "--help", "-h",
        "-q",        "--quiet", "-v",       "--verbose"};
    for (auto& bare : take_bare_settings(args, switches)) set->push_back(std::move(bare));
    auto only = take_repeated(args, "only");
    if (!only) return usage_error("race", only.error().message);
    a.set = std::move(set).value();
    a.only = std::move(only).value();
    std::vector<char*> ptrs;
    for (auto& arg : args) ptrs.push_back(arg.data());
    auto r = parse(options, static_cast<int>(ptrs.size()), ptrs.data());
    if (auto done = help_or_logging(options, r)) return *done;
    if (!r.count("config")) return usage_error("race", "--config FILE is required");
    // Loaded already (run_cli); every run records it, so that its jobs load it too.
    if (r.count("plugin")) {
      a.set.push_back("plugin=" + absolute_plugin_paths(r["plugin"].as<std::string>()));
    }
    a.command_line = command_line;
    a.progress = r.count("no-progress") == 0;
    const auto progress_every = parse_duration(r["progress-every"].as<std::string>());
    if (!progress_every || !(*progress_every > 0.0)) {
      return fail(fmt::format("--progress-every: {}",
                              progress_every ? "must be a positive duration such as 10s"
                                             : progress_every.error().message),
                  2);
    }
    a.progress_every_s = *progress_every;
    a.config = r["config"].as<std::string>();
    a.dry_run = r.count("dry-run") > 0;
    a.force = r.count("force") > 0;
    a.resume = r.count("resume") > 0;
    const auto every = parse_duration(r["checkpoint-every"].as<std::string>());
    if (!every) {
      return fail(fmt::format("--checkpoint-every: {}", every.error().message), 2);
    }
    a.checkpoint_every_s = *every;
    a.jobs = r["jobs"].as<int>();
    if (a.jobs < 1 || a.jobs > 1024) {
      return fail(fmt::format("--jobs {} is not a number of runs from 1 to 1024", a.jobs), 2);
    }
    if (r.count("data-dir")) a.data_dir = r["data-dir"].as<std::string>();
    if (!r.count("out") && !a.dry_run) return usage_error("race", "--out DIR is required");
    if (r.count("out")) a.out = r["out"].as<std::string>();
    if (r.count("out") && a.out.empty()) {
      return usage_error("race", "--out '' names no folder; give one, e.g. --out runs/race");
    }
    return run_race(a);
  } catch (const cxxopts::exceptions::exception& e) {
    return usage_error("race", e);
  }
}

}  // namespace stalesgd::cli
