// Runtime theory of Dutta et al. 2018 (§4, Theorems 1–5): the expected time per iteration
// E[T] of each rule when the per-minibatch time X is i.i.d. over workers and minibatches, in
// closed form where one exists, and for any delay spec by Monte Carlo over the same rule state
// machines the engines use (with gradients switched off).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "stalesgd/config/resolved_run.hpp"
#include "stalesgd/machine/machine.hpp"
#include "stalesgd/rules/rule.hpp"
#include "stalesgd/rules/rule_registry.hpp"
#include "stalesgd/straggler/delay_mode.hpp"
#include "stalesgd/straggler/distribution.hpp"
#include "stalesgd/straggler/order_statistics.hpp"
#include "stalesgd/straggler/profile.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

// The closed form the rule registered (rules/rule_registry.hpp) for P workers and K when every
// worker draws i.i.d. from `x`; nullopt where the rule has none (docs/theory.md lists them).
std::optional<ClosedForm> closed_form_runtime(const RuleConfig& rule, const Distribution& x);
// The same for a whole delay spec: the i.i.d. closed form when every worker draws from one
// distribution, the rule's fixed form when every worker's delay is constant
// (StragglerProfile::fixed_times), else nullopt.
std::optional<ClosedForm> closed_form_runtime(const RuleConfig& rule,
                                              const StragglerProfile& profile);

struct MonteCarloEstimate {
  double seconds = 0.0;  // mean time per iteration (steady state)
  double ci95 = 0.0;     // half-width of the 95% confidence interval (batch means)
  std::uint64_t iterations = 0;
  double mean_staleness = 0.0;
  // The share of applied gradients computed on the parameters they were applied to (staleness
  // 0): the error theory's p0 for the rule's own arrival process (docs/theory.md, "Error").
  double fresh_fraction = 1.0;
  // The share of the simulated time the server was busy (0 on the free machine).
  double server_utilization = 0.0;
};

// Simulates `iterations` updates of the rule (after a warm-up of 10 P updates) on the
// discrete-event clock with `profile`'s delays (any spec: overrides, time changes, traces) and
// estimates E[T] with a 95% interval from 32 batch means. Refuses what
// check_monte_carlo_size refuses, and an allocation that fails, as an Error.
Result<MonteCarloEstimate> monte_carlo_runtime(const RuleConfig& rule,
                                               const StragglerProfile& profile,
                                               std::uint64_t iterations, std::uint64_t seed,
                                               DelayMode mode = DelayMode::kPad,
                                               double compute_s = 0.0, const Machine& machine = {});

// The Monte Carlo keeps the time of every update: 8 bytes for each of the 10 P + `iterations`
// updates. Refuses, naming --samples and the largest count that fits, a count over
// monte_carlo_max_iterations(workers) (docs/theory.md).
Status check_monte_carlo_size(int workers, std::uint64_t iterations);

// The most updates a Monte Carlo with P workers may simulate here: its update times must fit in
// half of this machine's physical memory (sysconf), and in the address-space limit if one is
// set (ulimit -v).
std::uint64_t monte_carlo_max_iterations(int workers);

enum class PredictionMethod { kClosedForm, kMonteCarlo };
// "closed form", "monte carlo" (summary.json, results.csv).
const char* to_string(PredictionMethod method);

// The theory's prediction for a training run (summary.json's "theory", the race's columns).
struct RuntimePrediction {
  double seconds_per_iteration = 0.0;
  PredictionMethod method = PredictionMethod::kClosedForm;
  std::string formula;                // the closed form used, or the bound's; "" for none
  std::optional<double> upper_bound;  // a closed-form bound when Monte Carlo gave the value
  std::optional<MonteCarloEstimate> monte_carlo;
};

// The closed form where it is exact, else Monte Carlo with `mc_iterations` updates (per-minibatch
// time X only; the virtual clock's --compute-time and machine are modelled, and on a machine
// that is not free only the Monte Carlo is). nullopt for the sequential trainer and for delays
// with no positive mean on the free machine.
// `modelled` is the machine the run modelled (RunRecord::machine), else run.machine().
std::optional<RuntimePrediction> predict_runtime(const ResolvedRun& run,
                                                 std::uint64_t mc_iterations = 20000,
                                                 const Machine* modelled = nullptr);

}  // namespace stalesgd
