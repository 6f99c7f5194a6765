// Closed forms of E[T] per iteration, Dutta et al. 2018 §4 (Theorems 1-5); docs/theory.md.
#include <cmath>

#include "stalesgd/theory/runtime.hpp"

namespace stalesgd {

std::optional<ClosedForm> closed_form_runtime(const RuleConfig& rule, const Distribution& x) {
  const int p = rule.workers;
  const int k = rule.k;
  const auto se = x.as_shifted_exponential();
  const bool exponential = se && se->shift_s == 0.0;
  if (rule.kind == RuleKind::kSync || rule.kind == RuleKind::kKSync) {
    const double t = expected_order_statistic(x, k, p);
    if (exponential) return ClosedForm{t, "(H_P - H_{P-K}) / mu"};
    if (se) return ClosedForm{t, "shift + (H_P - H_{P-K}) * mean"};
    if (!std::isfinite(x.mean())) return std::nullopt;
    return ClosedForm{t, "E[X_{K:P}] (numerical)"};
  }
  if (rule.kind == RuleKind::kKBatchSync) {
    if (!exponential) return std::nullopt;
    return ClosedForm{k * se->mean_s / p, "K / (P mu)"};
  }
  if (rule.kind == RuleKind::kAsync || rule.kind == RuleKind::kKAsync) {
    // K = 1 is k-batch-async with K = 1: each worker is a renewal process with mean E[X], so
    // updates come at rate P / E[X] whatever the distribution (not only the bound below).
    if (k == 1 && std::isfinite(x.mean()) && !exponential) {
      return ClosedForm{x.mean() / p, "E[X] / P"};
    }
    if (exponential)
      return ClosedForm{(harmonic(p) - harmonic(p - k)) * se->mean_s, "(H_P - H_{P-K}) / mu"};
    if (se) {
      // Shifted exponential is new-longer-than-used: K-async is at most K-sync's E[X_{K:P}].
      return ClosedForm{expected_order_statistic(x, k, p), "<= E[X_{K:P}] (bound)", true};
    }
    return std::nullopt;
  }
  if (rule.kind == RuleKind::kKBatchAsync) {
    if (!std::isfinite(x.mean())) return std::nullopt;
    return ClosedForm{k * x.mean() / p, "K E[X] / P"};
  }
  return std::nullopt;
}

}  // namespace stalesgd
