// The theory's prediction attached to every run's summary.json.
#include <fmt/format.h>

#include "stalesgd/theory/runtime.hpp"

namespace stalesgd {

nlohmann::json predict_for_run(const TrainerOptions& o, std::uint64_t mc_iterations) {
  if (o.sequential) return nullptr;
  auto profile = StragglerProfile::parse(o.delay, o.workers, o.delay_base_dir);
  if (!profile) return nullptr;
  auto rule = make_rule(o.rule, o.workers);
  if (!rule) return nullptr;
  const int k = (*rule)->k();
  nlohmann::json j;
  j["note"] = "per-minibatch time X only: compute time is not modelled";
  const Distribution* iid = profile->iid();
  std::optional<ClosedForm> closed;
  if (iid != nullptr && iid->mean() > 0.0) closed = closed_form_runtime(o.rule.name, o.workers, k, *iid);
  std::optional<MonteCarloEstimate> mc;
  if (profile->iid() == nullptr || profile->iid()->mean() > 0.0) {
    auto est = monte_carlo_runtime(o.rule, o.workers, *profile, mc_iterations, o.seed, o.delay_mode,
                                   o.clock == ClockKind::kVirtual ? o.compute_time_s : 0.0);
    if (est) {
      mc = *est;
      j["monte_carlo"] = {{"seconds_per_iteration", est->seconds},
                          {"ci95", est->ci95},
                          {"iterations", est->iterations},
                          {"mean_staleness", est->mean_staleness}};
    }
  }
  if (closed && !closed->upper_bound) {
    j["seconds_per_iteration"] = closed->seconds;
    j["method"] = "closed form";
    j["formula"] = closed->formula;
  } else if (mc) {
    j["seconds_per_iteration"] = mc->seconds;
    j["method"] = "monte carlo";
    if (closed) {
      j["upper_bound"] = closed->seconds;
      j["formula"] = closed->formula;
    }
  } else {
    return nullptr;
  }
  return j;
}

}  // namespace stalesgd
