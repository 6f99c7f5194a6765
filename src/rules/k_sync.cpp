#include "rules/k_sync.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "stalesgd/rules/rule_registry.hpp"
#include "stalesgd/straggler/distribution.hpp"
#include "stalesgd/straggler/order_statistics.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {

KSync::KSync(int workers, int k, std::string name, bool k_is_live)
    : Rule(workers, k),
      name_(std::move(name)),
      k_is_live_(k_is_live),
      live_(workers),
      seen_(static_cast<std::size_t>(workers), false) {}

Decision KSync::on_gradient(const Arrival& a) {
  Decision d;
  d.next = AfterPush::kWait;
  // A gradient from an earlier round slipped through just before its cancellation: discard.
  if (a.computed_on != a.current) {
    d.accept = false;
    return d;
  }
  if (seen_[static_cast<std::size_t>(a.worker)]) {
    // The pusher waits for the update, so a second gradient in one round is an engine bug.
    throw std::logic_error("k-sync: worker " + std::to_string(a.worker) +
                           " pushed twice in one round");
  }
  seen_[static_cast<std::size_t>(a.worker)] = true;
  if (++pending_ >= k_) {
    d.apply = true;
    d.cancel_in_flight = true;
    pending_ = 0;
    seen_.assign(seen_.size(), false);
    if (k_is_live_) {  // the rounds after failures (on_retire)
      k_ = live_;
      failed_in_round_ = 0;
    }
  }
  return d;
}

// sync waits for every live worker (docs/rules.md, "Failed workers"): K becomes the live count,
// plus, for the round under way, the failed workers whose gradient it already holds (they
// count, and every live worker is still awaited). A round that holds a gradient from each is
// complete now.
Decision KSync::on_retire(int worker, int live) {
  Decision d;
  if (!k_is_live_) return d;
  live_ = live;
  if (seen_[static_cast<std::size_t>(worker)]) ++failed_in_round_;
  k_ = live_ + failed_in_round_;
  if (pending_ > 0 && pending_ >= k_) {
    d.apply = true;
    d.cancel_in_flight = true;
    pending_ = 0;
    seen_.assign(seen_.size(), false);
    k_ = live_;
    failed_in_round_ = 0;
  }
  return d;
}

void KSync::save_state(RuleState& out) const {
  out.put("seen", seen_);
}

void KSync::load_state(RuleState& in) {
  if (auto seen = in.flags("seen", static_cast<std::int64_t>(seen_.size()))) seen_ = *seen;
}

void KSync::clear_round() {
  Rule::clear_round();
  seen_.assign(seen_.size(), false);
}

namespace {

// The fixed computation model: every update restarts every worker, so each round lasts the K-th
// fastest worker's time.
std::optional<ClosedForm> k_sync_fixed_form(const RuleConfig& rule, std::span<const double> times) {
  std::vector<double> t(times.begin(), times.end());
  const auto kth = t.begin() + (rule.k - 1);
  std::nth_element(t.begin(), kth, t.end());
  return ClosedForm{*kth, "tau_(K), the K-th fastest worker's time"};
}

// E[T] = E[X_{K:P}], the K-th fastest of P draws, for any distribution with a finite mean;
// (H_P - H_{P-K}) / mu for the exponential. Dutta et al. 2018, Theorem 1 (sync: K = P).
std::optional<ClosedForm> k_sync_closed_form(const RuleConfig& rule, const Distribution& x) {
  const auto se = x.as_shifted_exponential();
  const double t = expected_order_statistic(x, rule.k, rule.workers);
  if (se && se->shift_s == 0.0) return ClosedForm{t, "(H_P - H_{P-K}) / mu"};
  if (se) return ClosedForm{t, "shift + (H_P - H_{P-K}) * mean"};
  if (!std::isfinite(x.mean())) return std::nullopt;
  return ClosedForm{t, "E[X_{K:P}] (numerical)"};
}

// --rule backup --backups b: Chen et al. 2016's sync with b backup workers, which is k-sync
// with K = P - b. A --k that says the same K is accepted (summary.json's config holds both).
Result<RuleConfig> resolve_backup(const RuleSpec& spec, int workers) {
  const auto b = spec.params.integer("backups", -1);
  if (b == -1) {
    return Error{
        fmt::format("--rule backup needs --backups b, the workers the update does not wait for "
                    "(0 <= b < P = {}; K = P - b)",
                    workers)};
  }
  if (b < 0 || b >= workers) {
    return Error{fmt::format(
        "--backups {} is out of range for --workers {}: b must satisfy 0 <= b < P (K = P - b)", b,
        workers)};
  }
  if (spec.k != 0 && spec.k != workers - b) {
    return Error{fmt::format(
        "--rule backup --backups {} waits for K = P - b = {} gradients, so --k {} does not "
        "apply; drop --k or use --rule k-sync --k {}",
        b, workers - b, spec.k, spec.k)};
  }
  return RuleConfig{"backup", workers, workers - static_cast<int>(b), spec.params};
}

std::unique_ptr<Rule> make_k_sync(const RuleConfig& c) {
  return std::make_unique<KSync>(c.workers, c.k, std::string(c.name()));
}

}  // namespace

RuleInfo sync_rule() {
  return {.name = "sync",
          .summary = "every update waits for all P workers' gradients (K = P)",
          .synchronous = true,
          .k = KChoice::kAllWorkers,
          .make = [](const RuleConfig& c) -> std::unique_ptr<Rule> {
            return std::make_unique<KSync>(c.workers, c.workers, "sync", /*k_is_live=*/true);
          },
          .closed_form = k_sync_closed_form,
          .fixed_form = k_sync_fixed_form,
          .plain_sgd = true};
}

RuleInfo k_sync_rule() {
  return {.name = "k-sync",
          .summary = "the first K of P fresh gradients make the update; the rest are cancelled",
          .synchronous = true,
          .k = KChoice::kGiven,
          .make = make_k_sync,
          .closed_form = k_sync_closed_form,
          .fixed_form = k_sync_fixed_form,
          .takes_adasync = true};
}

RuleInfo backup_rule() {
  return {.name = "backup",
          .summary = "sync with b backup workers: k-sync with K = P - b (--backups b)",
          .synchronous = true,
          .make = make_k_sync,
          .closed_form = k_sync_closed_form,
          .fixed_form = k_sync_fixed_form,
          .options = {{.name = "backups",
                       .help = "workers the update does not wait for b, 0 <= b < P (k-sync with "
                               "K = P - b)",
                       .min = 0,
                       .max = 4095,
                       .expects = "an integer b with 0 <= b < P"}},
          .resolve = resolve_backup,
          // b = P - K backups, as many as the new P allows.
          .at_workers =
              [](const RuleConfig& c, int workers) {
                RuleSpec spec{"backup", 0, c.params};
                spec.params.set("backups", std::int64_t{std::min(c.workers - c.k, workers - 1)});
                return resolve_rule(spec, workers);
              },
          // Its K is P - b: the flag to change is --backups.
          .fewer_workers_fix =
              [](const RuleConfig& c, int live) {
                return fmt::format("raise --backups to {} or more", c.workers - live);
              }};
}

}  // namespace stalesgd
