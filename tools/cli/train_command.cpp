// `stalesgd train`.
#include <cstdio>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/interrupt.hpp"
#include "engine/mpi/mpi_runtime.hpp"
#include "stalesgd/config/resolved_run.hpp"
#include "stalesgd/data/catalog.hpp"
#include "stalesgd/engine/trainer.hpp"
#include "stalesgd/output/run_writer.hpp"
#include "stalesgd/theory/runtime.hpp"

namespace stalesgd::cli {
namespace {

void print_summary(const ResolvedRun& resolved, const RunRecord& run,
                   const std::optional<RuntimePrediction>& theory) {
  const TrainerOptions& o = resolved.options();
  const auto st = staleness_stats(run);
  const auto g = gradient_totals(run);
  const std::uint64_t iterations = run.updates.empty() ? 0 : run.updates.back().iteration;
  const int k = resolved.rule().k;
  fmt::print("{:<18}{} on {}, {}\n", "model", run.model, o.dataset,
             o.sequential ? "sequential SGD" : "parameter server");
  if (!o.sequential) {
    fmt::print("{:<18}{}  P={}  K={}  delay {} ({}), {} clock{}\n", "rule", o.rule.name, o.workers,
               k, o.delay, to_string(o.delay_mode), to_string(o.clock),
               o.clock == ClockKind::kReal && o.server != ServerPlacement::kInline
                   ? fmt::format(", server {}", to_string(o.server))
                   : std::string());
  }
  fmt::print("{:<18}{} ({})\n", "iterations", iterations, to_string(run.stop_reason));
  fmt::print("{:<18}{:.3f}\n", o.clock == ClockKind::kVirtual ? "virtual seconds" : "wall seconds",
             run.wall_s);
  std::string predicted;
  if (theory) {
    const double t = theory->seconds_per_iteration;
    predicted = fmt::format("   theory {:.6f} ({})  measured/theory {:.3f}", t,
                            to_string(theory->method), seconds_per_iteration(run) / t);
  }
  fmt::print("{:<18}{:.6f}{}\n", "s / iteration", seconds_per_iteration(run), predicted);
  fmt::print("{:<18}mean {:.3f}  p95 {:.0f}  max {}\n", "staleness", st.mean, st.p95, st.max);
  fmt::print("{:<18}started {}  computed {}  pushed {}  applied {}  cancelled {}\n", "gradients",
             g.started, g.computed, g.pushed, g.applied, g.cancelled);
  std::string failed;
  for (const auto& w : run.workers) {
    if (!w.failed) continue;
    failed += fmt::format("{}w{} {} at {:.3f} s", failed.empty() ? "" : ", ", w.worker, w.failure,
                          w.failed_at_s);
  }
  if (!failed.empty()) fmt::print("{:<18}{}\n", "failed workers", failed);
  if (!run.evals.empty()) {
    const auto& e = run.evals.back();
    fmt::print("{:<18}{:.4f}  (test loss {:.4f}, train loss {:.4f})\n", "final test error",
               e.test_error, e.test_loss, e.train_loss);
  }
  if (o.target_error > 0.0) {
    fmt::print("{:<18}{}\n", "time to target",
               run.time_to_target_s ? fmt::format("{:.3f} s", *run.time_to_target_s)
                                    : std::string("not reached"));
  }
}

}  // namespace

int run_train(const TrainerOptions& given) {
  TrainerOptions fitted = given;
  if (auto s = mpi::fit_workers(fitted); !s) return fail(s.error().message, 2);  // --engine mpi: P
  auto resolved = ResolvedRun::resolve(fitted);
  if (!resolved) return fail(resolved.error().message, 2);
  const TrainerOptions& options = resolved->options();
  // From here on Ctrl-C stops the run cleanly.
  const ScopedInterrupt interrupt(mpi::active() ? ScopedInterrupt::SecondSignal::kIgnored
                                                : ScopedInterrupt::SecondSignal::kExits);
  auto data = load_dataset(options.dataset, options.data_dir);
  // --engine mpi: every rank loaded its data, or all stop and rank 0 names the one that did not.
  if (auto s = mpi::agree(data ? Status{} : Status{data.error()}); !s) {
    return fail(s.error().message);
  }
  auto run = train(*resolved, *data, interrupt.flag());
  if (!run) return fail(run.error().message);
  if (!mpi::reports()) return 0;  // a worker rank: rank 0 reports and writes the outputs
  if (run->stop_reason == StopReason::kDiverged)
    return fail(run->divergence);  // no output passed off as a result

  const auto theory = predict_runtime(*resolved);
  print_summary(*resolved, *run, theory);
  if (!options.out_dir.empty()) {
    if (auto s = write_run_outputs(options.out_dir, *resolved, *run, theory); !s) {
      return fail(s.error().message);
    }
    fmt::print("{:<18}{}/ (updates.csv gradients.csv evals.csv workers.csv summary.json)\n",
               "outputs", options.out_dir.string());
  }
  // Written first, then the one line, last also when stdout is a pipe: failed workers or a
  // stall exit 1, an exception in one of the run's threads 3 (an internal error, as main's).
  std::fflush(stdout);
  switch (run->stop_reason) {
    case StopReason::kWorkersFailed:
    case StopReason::kStalled:
      return fail(run->stop_message, 1);
    case StopReason::kFailed:
      return fail(run->stop_message, 3);
    case StopReason::kInterrupted:
      return interrupt.exit_code();
    default:
      return 0;
  }
}

}  // namespace stalesgd::cli
