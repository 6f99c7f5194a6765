// `stalesgd race`: the runs of an experiment file (some of them, with --only; changed by --set),
// then the results table.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/interrupt.hpp"
#include "output/folder_lock.hpp"
#include "stalesgd/experiment/race.hpp"
#include "util/live_line.hpp"
#include "util/logging.hpp"

namespace stalesgd::cli {
namespace {

// --dry-run: one row per run, the columns padded so that the table reads in a terminal.
void print_runs(const Experiment& ex, const std::string& out) {
  std::vector<std::vector<std::string>> table{
      {"label", "folder", "rule", "K", "P", "delay", "lr", "batch", "seed", "clock"}};
  const bool mpi = std::any_of(ex.runs.begin(), ex.runs.end(), [](const ExperimentRun& r) {
    return r.options().engine == EngineKind::kMpi;
  });
  if (mpi) table[0].push_back("engine");
  for (const auto& r : ex.runs) {
    const auto& o = r.options();
    table.push_back({r.label, out.empty() ? r.slug : out + "/" + r.slug, o.rule.name,
                     fmt::format("{}", r.run.rule().k), fmt::format("{}", o.workers), o.delay,
                     fmt::format("{}", o.lr), fmt::format("{}", o.batch), fmt::format("{}", o.seed),
                     to_string(o.clock)});
    if (mpi) {
      const int per_rank = std::max(1, o.workers_per_rank);
      table.back().push_back(o.engine == EngineKind::kMpi
                                 ? fmt::format("mpirun -np {} ({} ranks x {} threads)",
                                               o.workers / per_rank + 1, o.workers / per_rank,
                                               per_rank)
                                 : std::string("thread"));
    }
  }
  std::vector<std::size_t> width(table[0].size(), 0);
  for (const auto& row : table) {
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  const auto print_row = [&](const std::vector<std::string>& row) {
    std::string line = "|";
    for (std::size_t c = 0; c < row.size(); ++c) line += fmt::format(" {:<{}} |", row[c], width[c]);
    fmt::print("{}\n", line);
  };
  print_row(table[0]);
  std::string rule = "|";
  for (std::size_t w : width) rule += std::string(w + 2, '-') + "|";
  fmt::print("{}\n", rule);
  for (std::size_t i = 1; i < table.size(); ++i) print_row(table[i]);
}

// With --jobs > 1: which runs share the machine, and why the others do not.
void print_jobs_plan(const Experiment& ex, int jobs) {
  if (jobs <= 1) return;
  const auto together =
      static_cast<std::size_t>(std::count_if(ex.runs.begin(), ex.runs.end(), may_run_alongside));
  const std::size_t alone = ex.runs.size() - together;
  if (alone == 0) return;
  if (together == 0) {
    fmt::print(
        "--jobs {}: every run is on the real clock, so they run one at a time (side by "
        "side they would disturb each other's wallclock)\n",
        jobs);
  } else {
    fmt::print(
        "--jobs {}: {} virtual-clock run{} go {} at a time, then {} real-clock run{} one "
        "at a time (side by side they would disturb each other's wallclock)\n",
        jobs, together, together == 1 ? "" : "s", jobs, alone, alone == 1 ? "" : "s");
  }
}

}  // namespace

int run_race(const RaceArgs& args) {
  std::vector<std::string> set = args.set;
  if (!args.data_dir.empty()) set.push_back("data_dir=" + args.data_dir);
  auto ex = load_experiment(args.config, set);
  if (!ex) return fail(ex.error().message, 2);
  if (auto s = select_runs(*ex, args.only); !s) return fail(s.error().message, 2);
  // A folder in use (it, one around it or one inside it: docs/reliability.md) is named before
  // what it holds is judged; the lock itself is taken below, once the runs are checked.
  if (!args.out.empty() && !args.dry_run) {
    if (auto s = FolderLock::check(args.out); !s) return fail(s.error().message);
  }
  if (!args.out.empty()) {
    const auto existing = args.resume  ? ExistingOut::kResume
                          : args.force ? ExistingOut::kOverwrite
                                       : ExistingOut::kRefuse;
    if (auto s = check_race_out(args.out, existing); !s) return fail(s.error().message, 2);
  }
  // Every run's data set and model before anything runs, or is listed as if it would.
  auto data = check_race(*ex);
  if (!data) return fail(data.error().message);
  if (args.dry_run) {
    print_runs(*ex, args.out);
    return 0;
  }
  // One process per race folder for the whole race (docs/reliability.md).
  FolderLock lock;
  if (!args.out.empty()) {
    auto locked = FolderLock::acquire(args.out);
    if (!locked) return fail(locked.error().message);
    lock = std::move(locked).value();
  }
  fmt::print("race '{}': {} runs into {}/\n", ex->name, ex->runs.size(), args.out);
  if (!ex->description.empty()) fmt::print("{}\n", ex->description);
  print_jobs_plan(*ex, args.jobs);
  std::fflush(stdout);

  const ScopedInterrupt interrupt;
  const std::size_t n = ex->runs.size();
  // The ended runs' lines in the order the runs started: with --jobs a run that ends before one
  // started earlier waits for it (on_run_done comes one call at a time).
  const std::vector<std::size_t> order = start_order(*ex, args.jobs);
  std::vector<std::optional<RaceRow>> ended(n);
  std::size_t printed = 0;
  // `all`: also past a run that never ended (the race failed or was interrupted).
  const auto print_ended = [&](bool all) {
    for (; printed < order.size() && (all || ended[order[printed]]); ++printed) {
      const std::size_t i = order[printed];
      if (!ended[i]) continue;
      const RaceRow& row = *ended[i];
      if (row.stop_reason == StopReason::kDiverged) {
        fmt::print("[{}/{}] {:<28} {}\n", i + 1, n, row.label, row.divergence);
      } else {
        fmt::print("[{}/{}] {:<28} {} iterations in {:.1f} s, test error {}\n", i + 1, n, row.label,
                   row.iterations, row.wall_s,
                   row.final_test_error ? fmt::format("{:.4f}", *row.final_test_error) : "-");
      }
    }
    std::fflush(stdout);
  };
  auto outcome = stalesgd::run_race(
      *ex, std::move(data).value(), args.out, interrupt.flag(),
      [&](std::size_t i, const RaceRow& row) {
        ended[i] = row;
        // Around the live line, which a terminal's stderr may show on the same screen.
        live_line::around([&] { print_ended(false); });
      },
      RaceSettings{.resume = args.resume,
                   .rerun_changed = args.resume && args.force,
                   .checkpoint_every_s = args.checkpoint_every_s,
                   .jobs = args.jobs,
                   .progress = args.progress && logging::stderr_level() <= spdlog::level::info,
                   .progress_every_s = args.progress_every_s,
                   .command_line = args.command_line});
  print_ended(true);
  if (!outcome) return fail(outcome.error().message);

  double target = 0.0;
  for (const auto& r : ex->runs) target = std::max(target, r.options().target_error);
  fmt::print("\n{}\n", results_markdown(outcome->rows, target));
  fmt::print("results: {}/results.csv; plots: /usr/bin/python3 tools/plot.py {}\n", args.out,
             args.out);
  return outcome->interrupted ? interrupt.exit_code() : 0;
}

}  // namespace stalesgd::cli
