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

void Malenia::save(StateWriter& out) const {
  Rule::save(out);
  out.values(counts_);
  out.values(std::vector<std::uint8_t>(live_.begin(), live_.end()));
}

void Malenia::load(StateReader& in) {
  Rule::load(in);
  const auto n = static_cast<std::int64_t>(counts_.size());
  auto counts = in.values<int>(n);
  const auto live = in.values<std::uint8_t>(n);
  if (!in.ok()) return;
  counts_ = std::move(counts);
  live_.assign(live.begin(), live.end());
}

namespace {

Result<RuleConfig> resolve_malenia(const RuleSpec& spec, int workers) {
  if (spec.k == 0) {
    return Error{
        "--rule malenia needs --k S: an update waits until every worker has given a gradient "
        "and the harmonic mean of their counts reaches S / P (S >= 1; S = P: one each)"};
  }
  if (spec.k < 1) return Error{fmt::format("--k {} must be at least 1 (S >= 1)", spec.k)};
  return RuleConfig{"malenia", workers, spec.k};
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
          }};
}

}  // namespace stalesgd
