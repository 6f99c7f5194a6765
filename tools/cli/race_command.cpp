// `stalesgd race`: the runs of an experiment file in sequence, then the results table.
#include <csignal>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "stalesgd/engine/race.hpp"

namespace stalesgd::cli {
namespace {

std::atomic<bool> g_race_interrupt{false};
extern "C" void on_race_sigint(int) { g_race_interrupt.store(true, std::memory_order_relaxed); }

}  // namespace

int run_race(const RaceArgs& args) {
  auto ex = load_experiment(args.config);
  if (!ex) return fail(ex.error().message, 2);
  if (args.dry_run) {
    for (const auto& r : ex->runs) fmt::print("{}  ->  {}/{}\n", r.label, args.out, r.slug);
    return 0;
  }
  fmt::print("race '{}': {} runs into {}/\n", ex->name, ex->runs.size(), args.out);
  if (!ex->description.empty()) fmt::print("{}\n", ex->description);
  std::fflush(stdout);

  g_race_interrupt.store(false);
  struct sigaction sa {};
  sa.sa_handler = on_race_sigint;
  sigemptyset(&sa.sa_mask);
  struct sigaction old {};
  sigaction(SIGINT, &sa, &old);
  const std::size_t n = ex->runs.size();
  auto outcome = stalesgd::run_race(*ex, args.out, &g_race_interrupt, [&](std::size_t i, const RaceRow& row) {
    fmt::print("[{}/{}] {:<28} {} iterations in {:.1f} s, test error {}\n", i + 1, n, row.label,
               row.iterations, row.wall_s,
               row.final_test_error ? fmt::format("{:.4f}", *row.final_test_error) : "-");
    std::fflush(stdout);
  });
  sigaction(SIGINT, &old, nullptr);
  if (!outcome) return fail(outcome.error().message);

  double target = 0.0;
  for (const auto& r : ex->runs) target = std::max(target, r.options.target_error);
  fmt::print("\n{}\n", results_markdown(outcome->rows, target));
  fmt::print("results: {}/results.csv; plots: /usr/bin/python3 tools/plot.py {}\n", args.out, args.out);
  return outcome->interrupted ? 130 : 0;
}

}  // namespace stalesgd::cli
