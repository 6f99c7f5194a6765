// `stalesgd train`.
#include <cstdio>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/interrupt.hpp"
#include "stalesgd/data/catalog.hpp"
#include "stalesgd/engine/trainer.hpp"
#include "stalesgd/metrics/run_writer.hpp"
#include "stalesgd/theory/runtime.hpp"

namespace stalesgd::cli {
namespace {

void print_summary(const TrainerOptions& o, const RunRecord& run, const nlohmann::json& theory) {
  const auto st = staleness_stats(run);
  const auto g = gradient_totals(run);
  const std::uint64_t iterations = run.updates.empty() ? 0 : run.updates.back().iteration;
  const int k = o.rule.k != 0 ? o.rule.k : (o.rule.name == "async" ? 1 : o.workers);
  fmt::print("{:<18}{} on {}, {}\n", "model", run.model, o.dataset,
             o.sequential ? "sequential SGD" : "parameter server");
  if (!o.sequential) {
    fmt::print("{:<18}{}  P={}  K={}  delay {} ({}), {} clock\n", "rule", o.rule.name, o.workers, k,
               o.delay, to_string(o.delay_mode), to_string(o.clock));
  }
  fmt::print("{:<18}{} ({})\n", "iterations", iterations, run.stop_reason);
  fmt::print("{:<18}{:.3f}\n", o.clock == ClockKind::kVirtual ? "virtual seconds" : "wall seconds",
             run.wall_s);
  std::string predicted;
  if (theory.is_object() && theory.contains("seconds_per_iteration") &&
      theory["seconds_per_iteration"].is_number()) {
    const double t = theory["seconds_per_iteration"].get<double>();
    predicted = fmt::format("   theory {:.6f} ({})  measured/theory {:.3f}", t,
                            theory.value("method", std::string()), seconds_per_iteration(run) / t);
  }
  fmt::print("{:<18}{:.6f}{}\n", "s / iteration", seconds_per_iteration(run), predicted);
  fmt::print("{:<18}mean {:.3f}  p95 {:.0f}  max {}\n", "staleness", st.mean, st.p95, st.max);
  fmt::print("{:<18}started {}  computed {}  pushed {}  applied {}  cancelled {}\n", "gradients",
             g.started, g.computed, g.pushed, g.applied, g.cancelled);
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

int run_train(const TrainerOptions& options) {
  if (auto s = validate(options); !s) return fail(s.error().message, 2);
  const ScopedInterrupt interrupt;  // from here on Ctrl-C stops the run cleanly
  auto data = load_dataset(options.dataset, options.data_dir);
  if (!data) return fail(data.error().message);
  auto run = train(options, *data, interrupt.flag());
  if (!run) return fail(run.error().message);
  if (run->stop_reason == "diverged")
    return fail(run->divergence);  // no output passed off as a result

  const nlohmann::json theory = predict_for_run(options);
  print_summary(options, *run, theory);
  if (!options.out_dir.empty()) {
    if (auto s = write_run_outputs(options.out_dir, options, *run, theory); !s) {
      return fail(s.error().message);
    }
    fmt::print("{:<18}{}/ (updates.csv gradients.csv evals.csv workers.csv summary.json)\n",
               "outputs", options.out_dir.string());
  }
  return run->stop_reason == "interrupted" ? 130 : 0;
}

}  // namespace stalesgd::cli
