#include "rules/malenia.hpp"

#include <fmt/format.h>

#include "stalesgd/rules/rule_registry.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {

Malenia::Malenia(int workers, int s)
    : Rule(workers, s),
      counts_(static_cast<std::size_t>(workers), 0),
      live_(static_cast<std::size_t>(workers), true) {}

bool Malenia::complete() const {
  double inverse_sum = 0.0;
  int n = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    if (!live_[i]) continue;
    if (counts_[i] == 0) return false;  // every worker's data in every update
    inverse_sum += 1.0 / counts_[i];
    ++n;
  }
  // (1/n sum_i 1/B_i)^-1 >= S / n
  return n > 0 && inverse_sum * k_ <= static_cast<double>(n) * n;
}

Decision Malenia::on_gradient(const Arrival& a) {
  Decision d;
  d.next = AfterPush::kContinue;  // another gradient at the same point, or at the new one
  if (a.computed_on != a.current) {
    d.accept = false;  // computed at a point an update has left
    return d;
  }
  ++counts_[static_cast<std::size_t>(a.worker)];
  ++pending_;
  if (complete()) {
    d.apply = true;
    clear_round();
  }
  return d;
}

Decision Malenia::on_retire(int worker, int /*live*/) {
  live_[static_cast<std::size_t>(worker)] = false;
  counts_[static_cast<std::size_t>(worker)] = 0;
  Decision d;
  if (pending_ > 0 && complete()) {
    d.apply = true;
    clear_round();
  }
  return d;
}

void Malenia::clear_round() {
  Rule::clear_round();
  counts_.assign(counts_.size(), 0);
}

void Malenia::save_state(RuleState& out) const {
  out.put("counts", std::vector<std::int64_t>(counts_.begin(), counts_.end()));
  out.put("live", live_);
}

void Malenia::load_state(RuleState& in) {
  const auto n = static_cast<std::int64_t>(counts_.size());
  const auto counts = in.integers("counts", n);
  const auto live = in.flags("live", n);
  if (!counts || !live) return;
  for (const std::int64_t c : *counts) {
    if (c < 0 || c > most_pending()) return in.fail("a worker's count out of range");
  }
  counts_.assign(counts->begin(), counts->end());
  live_ = *live;
}

namespace {

Result<RuleConfig> resolve_malenia(const RuleSpec& spec, int workers) {
  if (spec.k == 0) {
    return Error{
        "--rule malenia needs --k S: an update waits until every worker has given a gradient "
        "and the harmonic mean of their counts reaches S / P (S >= 1; S = P: one each)"};
  }
  if (spec.k < 1) return Error{fmt::format("--k {} must be at least 1 (S >= 1)", spec.k)};
  return RuleConfig{"malenia", workers, spec.k, spec.params};
}

}  // namespace

RuleInfo malenia_rule() {
  return {.name = "malenia",
          .summary = "Malenia SGD: every worker's fresh gradients, averaged per worker (--k S)",
          .synchronous = true,
          .k = KChoice::kGiven,
          .make = [](const RuleConfig& c) -> std::unique_ptr<Rule> {
            return std::make_unique<Malenia>(c.workers, c.k);
          },
          .resolve = resolve_malenia,
          .at_workers = [](RuleConfig c, int workers) -> Result<RuleConfig> {
            c.workers = workers;  // S may exceed P
            return c;
          },
          // A mean of per-worker means differs from the mean of all only when workers hold
          // different data.
          .needs_partition = true};
}

}  // namespace stalesgd
