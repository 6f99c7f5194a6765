#include "rules/k_batch_async.hpp"

#include <cmath>

#include "stalesgd/rules/rule_registry.hpp"
#include "stalesgd/straggler/distribution.hpp"
#include "stalesgd/straggler/order_statistics.hpp"

namespace stalesgd {

Decision KBatchAsync::on_gradient(const Arrival&) {
  Decision d;
  d.next = AfterPush::kContinue;
  if (++pending_ >= k_) {
    d.apply = true;
    pending_ = 0;
  }
  return d;
}

RuleInfo k_batch_async_rule() {
  return {.name = "k-batch-async",
          .summary = "any K gradients, stale ones and repeats of a fast worker included",
          .synchronous = false,
          .k = KChoice::kGiven,
          .make = [](const RuleConfig& c) -> std::unique_ptr<Rule> {
            return std::make_unique<KBatchAsync>(c.workers, c.k);
          },
          // Dutta et al. 2018, Theorem 5: K E[X] / P for any distribution (each worker is a
          // renewal process with mean E[X]).
          .closed_form = [](const RuleConfig& rule,
                            const Distribution& x) -> std::optional<ClosedForm> {
            if (!std::isfinite(x.mean())) return std::nullopt;
            return ClosedForm{rule.k * x.mean() / rule.workers, "K E[X] / P"};
          },
          // Fixed times: nothing is cut, so gradients come at sum_i 1 / tau_i per second.
          .fixed_form = [](const RuleConfig& rule,
                           std::span<const double> times) -> std::optional<ClosedForm> {
            return ClosedForm{rule.k / finish_rate(times), "K / sum_i (1 / tau_i)"};
          }};
}

}  // namespace stalesgd
