#include "rules/k_async.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>

#include "stalesgd/rules/rule_registry.hpp"
#include "stalesgd/straggler/distribution.hpp"
#include "stalesgd/straggler/order_statistics.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {

KAsync::KAsync(int workers, int k, std::string name)
    : Rule(workers, k), name_(std::move(name)), seen_(static_cast<std::size_t>(workers), false) {}

Decision KAsync::on_gradient(const Arrival& a) {
  Decision d;
  d.next = AfterPush::kWait;
  if (seen_[static_cast<std::size_t>(a.worker)]) {
    throw std::logic_error("k-async: worker " + std::to_string(a.worker) +
                           " pushed twice in one round");
  }
  seen_[static_cast<std::size_t>(a.worker)] = true;
  if (++pending_ >= k_) {
    d.apply = true;
    pending_ = 0;
    seen_.assign(seen_.size(), false);
  }
  return d;
}

void KAsync::save_state(RuleState& out) const {
  out.put("seen", seen_);
}

void KAsync::load_state(RuleState& in) {
  if (auto seen = in.flags("seen", static_cast<std::int64_t>(seen_.size()))) seen_ = *seen;
}

void KAsync::clear_round() {
  Rule::clear_round();
  seen_.assign(seen_.size(), false);
}

namespace {

// Dutta et al. 2018, Theorems 3-4: (H_P - H_{P-K}) / mu for exponential delays; for the
// shifted exponential, new-longer-than-used, at most k-sync's E[X_{K:P}].
std::optional<ClosedForm> k_async_closed_form(const RuleConfig& rule, const Distribution& x) {
  const int p = rule.workers;
  const int k = rule.k;
  const auto se = x.as_shifted_exponential();
  const bool exponential = se && se->shift_s == 0.0;
  // K = 1 is k-batch-async with K = 1: each worker is a renewal process with mean E[X], so
  // updates come at rate P / E[X] whatever the distribution (not only the bound below).
  if (k == 1 && std::isfinite(x.mean()) && !exponential)
    return ClosedForm{x.mean() / p, "E[X] / P"};
  if (exponential) {
    return ClosedForm{(harmonic(p) - harmonic(p - k)) * se->mean_s, "(H_P - H_{P-K}) / mu"};
  }
  if (se) return ClosedForm{expected_order_statistic(x, k, p), "<= E[X_{K:P}] (bound)", true};
  return std::nullopt;
}

}  // namespace

RuleInfo async_rule() {
  return {.name = "async",
          .summary = "every gradient is an update as it arrives, stale or not (K = 1)",
          .synchronous = false,
          .k = KChoice::kOne,
          .make = [](const RuleConfig& c) -> std::unique_ptr<Rule> {
            return std::make_unique<KAsync>(c.workers, 1, "async");
          },
          .closed_form = k_async_closed_form,
          // Fixed times: every gradient is an update, at sum_i 1 / tau_i per second.
          .fixed_form = [](const RuleConfig&,
                           std::span<const double> times) -> std::optional<ClosedForm> {
            return ClosedForm{1.0 / finish_rate(times), "1 / sum_i (1 / tau_i)"};
          },
          // Every gradient is applied as it arrives: Hogwild!'s lock-free update can do that.
          .lock_free = true};
}

RuleInfo k_async_rule() {
  return {.name = "k-async",
          .summary = "the first K gradients of K distinct workers, stale ones included",
          .synchronous = false,
          .k = KChoice::kGiven,
          .make = [](const RuleConfig& c) -> std::unique_ptr<Rule> {
            return std::make_unique<KAsync>(c.workers, c.k);
          },
          .closed_form = k_async_closed_form,
          .takes_adasync = true};
}

}  // namespace stalesgd
