// Ssp: K = 1 updates and the start gate of stale-synchronous parallel (docs/rules.md, "SSP").
#include "rules/ssp.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "stalesgd/rules/rule_registry.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {

Ssp::Ssp(int workers, std::int64_t staleness_bound)
    : Rule(workers, 1),
      bound_(static_cast<std::uint64_t>(staleness_bound)),
      pushed_(static_cast<std::size_t>(workers), 0),
      live_(static_cast<std::size_t>(workers), true) {}

Decision Ssp::on_gradient(const Arrival& a) {
  // Only the slowest's own push can raise the minimum: a scan then, O(1) otherwise.
  const bool was_slowest = pushed_[static_cast<std::size_t>(a.worker)] == slowest_;
  ++pushed_[static_cast<std::size_t>(a.worker)];
  if (was_slowest) find_slowest();
  Decision d;
  d.apply = true;  // every gradient is an update, as async's
  return d;
}

Decision Ssp::on_retire(int worker, int /*live*/) {
  live_[static_cast<std::size_t>(worker)] = false;
  find_slowest();  // the bound is against the slowest worker still live
  return {};
}

bool Ssp::may_start(int worker) const {
  return pushed_[static_cast<std::size_t>(worker)] - slowest_ <= bound_;
}

void Ssp::find_slowest() {
  std::uint64_t slowest = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t w = 0; w < pushed_.size(); ++w) {
    if (live_[w]) slowest = std::min(slowest, pushed_[w]);
  }
  // No live worker left: the run ends (runs_with), nobody is gated.
  slowest_ = slowest == std::numeric_limits<std::uint64_t>::max() ? 0 : slowest;
}

void Ssp::save_state(RuleState& out) const {
  out.put("pushed", std::vector<std::int64_t>(pushed_.begin(), pushed_.end()));
  out.put("live", live_);
}

void Ssp::load_state(RuleState& in) {
  const auto n = static_cast<std::int64_t>(pushed_.size());
  const auto pushed = in.integers("pushed", n);
  const auto live = in.flags("live", n);
  if (!pushed || !live) return;
  for (const std::int64_t p : *pushed) {
    if (p < 0) return in.fail("a worker's pushed count below 0");
  }
  pushed_.assign(pushed->begin(), pushed->end());
  live_ = *live;
  find_slowest();
}

namespace {

// --rule ssp --staleness-bound s (docs/rules.md, "SSP"): K = 1.
Result<RuleConfig> resolve_ssp(const RuleSpec& spec, int workers) {
  if (!spec.params.has("staleness-bound")) {
    return Error{
        "--rule ssp needs --staleness-bound s, how many gradients a worker may run ahead of "
        "the slowest (0: lock-step)"};
  }
  if (spec.k != 0 && spec.k != 1) {
    return Error{fmt::format(
        "ssp applies every gradient (K = 1), so --k {} does not apply; drop --k", spec.k)};
  }
  return RuleConfig{"ssp", workers, 1, spec.params};
}

}  // namespace

RuleInfo ssp_rule() {
  return {.name = "ssp",
          .summary = "stale-synchronous parallel: async updates, no worker more than s ahead",
          .synchronous = false,
          .k = KChoice::kOne,
          .make = [](const RuleConfig& c) -> std::unique_ptr<Rule> {
            return std::make_unique<Ssp>(c.workers, c.params.integer("staleness-bound", 0));
          },
          .options = {{.name = "staleness-bound",
                       .help = "gradients a worker may run ahead of the slowest live worker s "
                               "(0: lock-step)",
                       .min = 0,
                       .max = 1'000'000'000,
                       .expects = "an integer s with 0 <= s <= 1000000000"}},
          .resolve = resolve_ssp};
}

}  // namespace stalesgd
