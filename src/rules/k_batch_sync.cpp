#include "rules/k_batch_sync.hpp"

#include "stalesgd/rules/rule_registry.hpp"
#include "stalesgd/straggler/distribution.hpp"
#include "stalesgd/straggler/order_statistics.hpp"

namespace stalesgd {

Decision KBatchSync::on_gradient(const Arrival& a) {
  Decision d;
  d.next = AfterPush::kContinue;  // another minibatch on the same w_j
  if (a.computed_on != a.current) {
    d.accept = false;  // computed on an earlier version: cancelled work that raced the update
    return d;
  }
  if (++pending_ >= k_) {
    d.apply = true;
    d.cancel_in_flight = cancel_;
    pending_ = 0;
  }
  return d;
}

// The fixed computation model: every update restarts every worker, so a round lasts until the
// K-th finish of them all, a fast worker's repeats counted (rennala --old-point interrupt too).
std::optional<ClosedForm> k_batch_sync_fixed_form(const RuleConfig& rule,
                                                  std::span<const double> times) {
  return ClosedForm{kth_finish(times, rule.k), "the K-th finish of all workers started together"};
}

RuleInfo k_batch_sync_rule() {
  return {.name = "k-batch-sync",
          .summary = "the first K fresh minibatch gradients from any workers; the rest cancelled",
          .synchronous = true,
          .k = KChoice::kGiven,
          .make = [](const RuleConfig& c) -> std::unique_ptr<Rule> {
            return std::make_unique<KBatchSync>(c.workers, c.k);
          },
          // Dutta et al. 2018, Theorem 2: K / (P mu), exponential delays only.
          .closed_form = [](const RuleConfig& rule,
                            const Distribution& x) -> std::optional<ClosedForm> {
            const auto se = x.as_shifted_exponential();
            if (!se || se->shift_s != 0.0) return std::nullopt;
            return ClosedForm{rule.k * se->mean_s / rule.workers, "K / (P mu)"};
          },
          .fixed_form = k_batch_sync_fixed_form};
}

}  // namespace stalesgd
