// The theory's prediction attached to every run's summary.json and race row.
#include "stalesgd/theory/runtime.hpp"

namespace stalesgd {

const char* to_string(PredictionMethod method) {
  return method == PredictionMethod::kClosedForm ? "closed form" : "monte carlo";
}

std::optional<RuntimePrediction> predict_runtime(const ResolvedRun& run,
                                                 std::uint64_t mc_iterations,
                                                 const Machine* modelled) {
  const auto& o = run.options();
  if (o.sequential) return std::nullopt;
  const StragglerProfile& profile = run.delays();
  const Distribution* iid = profile.iid();
  const Machine& machine = modelled != nullptr ? *modelled : run.machine();
  const bool free = machine.free() && o.server_time.empty();
  if (free && iid != nullptr && !(iid->mean() > 0.0)) return std::nullopt;
  std::optional<ClosedForm> closed;
  // The paper's closed forms are the free machine's.
  if (free) closed = closed_form_runtime(run.rule(), profile);
  RuntimePrediction p;
  if (closed && !closed->upper_bound) {
    p.seconds_per_iteration = closed->seconds;
    p.method = PredictionMethod::kClosedForm;
    p.formula = closed->formula;
  }
  // Monte Carlo as well, for its staleness estimate and interval, even where a closed form is
  // exact.
  auto mc = monte_carlo_runtime(run.rule(), profile, mc_iterations, o.seed, o.delay_mode,
                                o.clock == ClockKind::kVirtual ? machine.compute_s : 0.0, machine);
  if (mc) p.monte_carlo = *mc;
  if (!closed || closed->upper_bound) {
    if (!mc) return std::nullopt;
    p.seconds_per_iteration = mc->seconds;
    p.method = PredictionMethod::kMonteCarlo;
    if (closed) {
      p.upper_bound = closed->seconds;
      p.formula = closed->formula;
    }
  }
  return p;
}

}  // namespace stalesgd
