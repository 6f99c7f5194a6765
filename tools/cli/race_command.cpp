// `stalesgd race`: the runs of an experiment file in sequence, then the results table.
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/interrupt.hpp"
#include "stalesgd/experiment/race.hpp"

namespace stalesgd::cli {
int run_race(const RaceArgs& args) {
  auto ex = load_experiment(args.config);
  if (!ex) return fail(ex.error().message, 2);
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
    for (const auto& r : ex->runs) {
      const auto& o = r.options();
      const std::string where =
          o.engine == EngineKind::kMpi
              ? fmt::format("  (mpirun -np {}: {} worker ranks x {} threads)",
                            o.workers / std::max(1, o.workers_per_rank) + 1,
                            o.workers / std::max(1, o.workers_per_rank), o.workers_per_rank)
              : std::string();
      fmt::print("{}  ->  {}{}\n", r.label, args.out.empty() ? r.slug : args.out + "/" + r.slug,
                 where);
    }
    return 0;
  }
  fmt::print("race '{}': {} runs into {}/\n", ex->name, ex->runs.size(), args.out);
  if (!ex->description.empty()) fmt::print("{}\n", ex->description);
  std::fflush(stdout);

  const ScopedInterrupt interrupt;
  const std::size_t n = ex->runs.size();
  auto outcome = stalesgd::run_race(
      *ex, std::move(data).value(), args.out, interrupt.flag(),
      [&](std::size_t i, const RaceRow& row) {
        if (row.stop_reason == StopReason::kDiverged) {
          fmt::print("[{}/{}] {:<28} {}\n", i + 1, n, row.label, row.divergence);
        } else {
          fmt::print("[{}/{}] {:<28} {} iterations in {:.1f} s, test error {}\n", i + 1, n,
                     row.label, row.iterations, row.wall_s,
                     row.final_test_error ? fmt::format("{:.4f}", *row.final_test_error) : "-");
        }
        std::fflush(stdout);
      },
      RaceSettings{args.resume, args.checkpoint_every_s});
  if (!outcome) return fail(outcome.error().message);

  double target = 0.0;
  for (const auto& r : ex->runs) target = std::max(target, r.options().target_error);
  fmt::print("\n{}\n", results_markdown(outcome->rows, target));
  fmt::print("results: {}/results.csv; plots: /usr/bin/python3 tools/plot.py {}\n", args.out,
             args.out);
  return outcome->interrupted ? interrupt.exit_code() : 0;
}

}  // namespace stalesgd::cli
