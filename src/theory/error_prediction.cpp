// Predicted error against wallclock for each K; error_prediction.hpp, docs/theory.md "Error".
#include "stalesgd/theory/error_prediction.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "rules/reference_rules.hpp"
#include "stalesgd/rules/rule_registry.hpp"
#include "stalesgd/straggler/profile.hpp"
#include "stalesgd/theory/runtime.hpp"

namespace stalesgd {
namespace {

// E[T], the mean staleness and the share of fresh gradients for one rule: E[T] from the closed
// form when it is a value, else the Monte Carlo; the other two always from the Monte Carlo
// (k-batch-async's p0 is not K/P: the rule's own arrival process decides it).
struct Runtime {
  double seconds = 0.0;
  double staleness = 0.0;
  std::string method;
  double fresh = 1.0;
};

Result<Runtime> runtime_of(const RuleConfig& rule, const StragglerProfile& profile,
                           const ErrorRequest& r) {
  auto mc = monte_carlo_runtime(rule, profile, r.samples, r.seed, r.delay_mode);
  if (!mc) return mc.error();
  Runtime out{mc->seconds, mc->mean_staleness, "monte carlo", mc->fresh_fraction};
  if (const Distribution* x = profile.iid()) {
    if (auto c = closed_form_runtime(rule, *x); c && !c->upper_bound) {
      out.seconds = c->seconds;
      out.method = "closed form";
    }
  }
  return out;
}

// The rule at each K asked for: its own K for a rule whose K is fixed (sync, async) or when
// given, else K = 1, 2, 4, ..., P.
Result<std::vector<RuleConfig>> rules_of(const ErrorRequest& r) {
  RuleSpec rule = r.rule;
  if (rule.name.empty()) rule.name = first_k_rule(rule.k).name;
  const RuleInfo* info = find_rule(rule.name);
  std::vector<int> ks;
  if (r.rule.k > 0 || (info != nullptr && info->k != KChoice::kGiven)) {
    ks.push_back(r.rule.k);
  } else {
    for (int k = 1; k <= r.workers; k = k * 2 > r.workers && k != r.workers ? r.workers : k * 2)
      ks.push_back(k);
  }
  std::vector<RuleConfig> out;
  for (int k : ks) {
    RuleSpec spec = rule;
    spec.k = k;
    auto resolved = resolve_rule(spec, r.workers);
    if (!resolved) return resolved.error();
    out.push_back(*resolved);
  }
  return out;
}

}  // namespace

Status check_error_request(const ErrorRequest& r) {
  if (r.model.name != "softmax") {
    return Error{fmt::format(
        "--model {} is not convex: the error bounds need a strongly convex loss, i.e. --model "
        "softmax with --l2 > 0",
        r.model.name)};
  }
  if (!(r.model.l2 > 0.0f)) {
    return Error{fmt::format(
        "--l2 {} leaves the softmax loss not strongly convex, so the error bounds (c = l2 > 0) "
        "do not apply; give e.g. --l2 1e-3",
        r.model.l2)};
  }
  if (r.workers < 1 || r.workers > 4096) {
    return Error{fmt::format("--workers {} is out of range; use 1 to 4096", r.workers)};
  }
  if (r.rule.k < 0) return Error{fmt::format("--k {} must satisfy 1 <= K <= P", r.rule.k)};
  if (r.samples < 100) {
    return Error{fmt::format("--samples {} is too few; use at least 100", r.samples)};
  }
  if (!(r.lr > 0.0)) return Error{fmt::format("--lr {} must be positive", r.lr)};
  if (r.batch < 1 || r.batch > 65536) {
    return Error{fmt::format("--batch {} is out of range; use 1 to 65536", r.batch)};
  }
  if (r.optimum_epochs < 1) return Error{"--optimum-epochs must be at least 1"};
  if (r.p0 && !(*r.p0 > 0.0 && *r.p0 <= 1.0)) return Error{"--p0 must be in (0, 1]"};
  if (r.gamma && !(*r.gamma >= 0.0 && *r.gamma <= 1.0)) return Error{"--gamma must be in [0, 1]"};
  for (double b : r.budgets) {
    if (!(b > 0.0) || !std::isfinite(b)) {
      return Error{fmt::format("--budget {} is not a positive duration; give e.g. 1s,10s,60s", b)};
    }
  }
  if (r.delay.empty()) return Error{"--delay is required, e.g. --delay exp:mean=10ms"};
  if (auto s = check_monte_carlo_size(r.workers, r.samples); !s) return s;
  auto profile = StragglerProfile::parse(r.delay, r.workers);
  if (!profile) return profile.error();
  const Distribution* x = profile->iid();
  if (x == nullptr || !(x->mean() > 0.0) || !std::isfinite(x->mean())) {
    return Error{fmt::format(
        "delay spec '{}' needs i.i.d. delays with a positive, finite mean for E[T]; give e.g. "
        "--delay exp:mean=10ms",
        r.delay)};
  }
  if (auto rules = rules_of(r); !rules) return rules.error();
  return {};
}

Result<ErrorPrediction> predict_errors(const ErrorRequest& r, const Dataset& data) {
  if (auto s = check_error_request(r); !s) return s.error();
  auto rules = rules_of(r);
  if (!rules) return rules.error();
  auto profile = StragglerProfile::parse(r.delay, r.workers);
  if (!profile) return profile.error();
  auto model = make_model(r.model, data.train.shape, data.num_classes);
  if (!model) return model.error();
  const ConstantsOptions options{.samples = r.constants_samples,
                                 .variance_batch = r.batch,
                                 .optimum_epochs = r.optimum_epochs,
                                 .seed = r.seed};
  auto est = estimate_error_constants(**model, r.model.l2, data.train, options);
  if (!est) return est.error();

  ErrorPrediction out;
  out.model = (*model)->describe();
  out.constants_samples = r.constants_samples == 0 ? data.train.count : r.constants_samples;
  for (const auto& rule : *rules) {
    auto rt = runtime_of(rule, *profile, r);
    if (!rt) return rt.error();
    Staleness s{r.p0.value_or(rt->fresh),
                r.gamma.value_or(drift_gamma(r.lr, est->k.L, rt->staleness))};
    if (rule.synchronous()) s = {};
    out.rules.push_back({rule, rt->seconds, rt->method, rt->staleness, s,
                         error_bound(rule, est->k, s, r.lr, r.batch)});
  }
  std::vector<double> budgets = r.budgets;
  if (budgets.empty()) {
    double fastest = std::numeric_limits<double>::infinity();
    for (const auto& e : out.rules) fastest = std::min(fastest, e.seconds_per_iteration);
    for (double m : {10.0, 100.0, 1000.0, 10000.0}) budgets.push_back(m * fastest);
  }
  for (double budget : budgets) {
    BudgetError row{budget, {}, 0};
    std::size_t best = 0;
    for (std::size_t i = 0; i < out.rules.size(); ++i) {
      const auto& e = out.rules[i];
      row.errors.push_back(error_at_time(e.bound, budget, e.seconds_per_iteration));
      if (row.errors[i] < row.errors[best]) best = i;
    }
    row.best_k = out.rules[best].rule.k;
    out.budgets.push_back(std::move(row));
  }
  out.constants = std::move(est).value();
  return out;
}

}  // namespace stalesgd
