#include "rules/mindflayer.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "stalesgd/rules/rule_registry.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {

MindFlayer::MindFlayer(int workers, int attempts, std::vector<double> limits)
    : Rule(workers, attempts),
      limits_(std::move(limits)),
      used_(static_cast<std::size_t>(workers), 0),
      live_(static_cast<std::size_t>(workers), true) {}

bool MindFlayer::complete() const {
  bool any = false;
  for (std::size_t i = 0; i < used_.size(); ++i) {
    if (!live_[i]) continue;
    if (used_[i] < k_) return false;
    any = true;
  }
  return any;
}

Decision MindFlayer::on_gradient(const Arrival& a) {
  Decision d;
  if (a.computed_on != a.current) {  // cannot happen: every worker waits for the update
    d.accept = false;
    return d;
  }
  auto& used = used_[static_cast<std::size_t>(a.worker)];
  used += a.attempts;
  d.accept = !a.abandoned;
  if (d.accept) ++pending_;
  d.next = used >= k_ ? AfterPush::kWait : AfterPush::kContinue;
  if (complete()) {
    d.apply = true;
    clear_round();
  }
  return d;
}

Decision MindFlayer::on_retire(int worker, int /*live*/) {
  live_[static_cast<std::size_t>(worker)] = false;
  used_[static_cast<std::size_t>(worker)] = 0;
  Decision d;
  if (complete()) {  // the others all wait for the round that the departed worker held up
    d.apply = true;
    clear_round();
  }
  return d;
}

AttemptBudget MindFlayer::budget(int worker) const {
  const auto w = static_cast<std::size_t>(worker);
  return {limits_[w], std::max(1, k_ - used_[w])};
}

void MindFlayer::clear_round() {
  Rule::clear_round();
  used_.assign(used_.size(), 0);
}

void MindFlayer::save(StateWriter& out) const {
  Rule::save(out);
  out.values(used_);
  out.values(std::vector<std::uint8_t>(live_.begin(), live_.end()));
}

void MindFlayer::load(StateReader& in) {
  Rule::load(in);
  const auto n = static_cast<std::int64_t>(used_.size());
  auto used = in.values<int>(n);
  const auto live = in.values<std::uint8_t>(n);
  if (!in.ok()) return;
  for (const int u : used) {
    if (u < 0 || u > k_) return in.fail("a worker's attempts out of range");
  }
  used_ = std::move(used);
  live_.assign(live.begin(), live.end());
}

namespace {

Result<RuleConfig> resolve_mindflayer(const RuleSpec& spec, int workers) {
  if (spec.time_limit.empty()) {
    return Error{
        "--rule mindflayer needs --time-limit D: an attempt whose delay would exceed D is "
        "abandoned and a fresh one starts (one duration, or per worker as in --delay: "
        "30ms;w3=90ms)"};
  }
  if (spec.k == 0) {
    return Error{
        "--rule mindflayer needs --k B, the attempts each worker makes per round (B >= 1)"};
  }
  if (spec.k < 1) return Error{fmt::format("--k {} must be at least 1 (B >= 1)", spec.k)};
  auto limits = parse_time_limits(spec.time_limit, workers);
  if (!limits) return limits.error();
  RuleConfig c{"mindflayer", workers, spec.k};
  c.time_limits = std::move(*limits);
  return c;
}

}  // namespace

RuleInfo mindflayer_rule() {
  return {.name = "mindflayer",
          .summary =
              "MindFlayer SGD: B = --k attempts per worker and round, each cut at "
              "--time-limit",
          .synchronous = true,
          .k = KChoice::kGiven,
          .make = [](const RuleConfig& c) -> std::unique_ptr<Rule> {
            return std::make_unique<MindFlayer>(c.workers, c.k, c.time_limits);
          },
          // The paper's round: each worker's B attempts take at most B t_i, so E[T] <= B max t_i.
          .closed_form = [](const RuleConfig& c, const Distribution&) -> std::optional<ClosedForm> {
            const double t = *std::max_element(c.time_limits.begin(), c.time_limits.end());
            return ClosedForm{c.k * t, "<= B max_i t_i (every attempt at its limit)", true};
          },
          // Fixed times: every attempt of worker i takes min(tau_i, t_i) (kept when tau_i <= t_i).
          .fixed_form = [](const RuleConfig& c,
                           std::span<const double> times) -> std::optional<ClosedForm> {
            double round = 0.0;
            for (std::size_t i = 0; i < times.size(); ++i) {
              round = std::max(round, c.k * std::min(times[i], c.time_limits[i]));
            }
            return ClosedForm{round, "max_i B min(tau_i, t_i)"};
          },
          .resolve = resolve_mindflayer,
          // B is per worker, whatever P; the workers kept keep their limits, new ones take
          // worker 0's.
          .at_workers = [](RuleConfig c, int workers) -> Result<RuleConfig> {
            c.workers = workers;
            const double first = c.time_limits.front();
            c.time_limits.resize(static_cast<std::size_t>(workers), first);
            return c;
          }};
}

}  // namespace stalesgd
