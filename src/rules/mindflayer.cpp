#include "rules/mindflayer.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>

#include <fmt/format.h>

#include "stalesgd/rules/rule_registry.hpp"
#include "stalesgd/straggler/profile.hpp"
#include "straggler/spec_text.hpp"
#include "straggler/worker_target.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {

MindFlayer::MindFlayer(std::vector<int> attempts, std::vector<double> limits, bool published)
    : Rule(static_cast<int>(attempts.size()), attempts.empty() ? 1 : attempts.front()),
      attempts_(std::move(attempts)),
      limits_(std::move(limits)),
      used_(attempts_.size(), 0),
      live_(attempts_.size(), true),
      published_(published) {}

std::int64_t MindFlayer::most_pending() const {
  std::int64_t n = 0;
  for (const int b : attempts_) n += b;
  return n;
}

void MindFlayer::use_delays(const StragglerProfile& delays) {
  if (!published_) return;
  chance_.assign(limits_.size(), 1.0);
  for (std::size_t i = 0; i < limits_.size(); ++i) {
    // check_delays refused delays without a distribution per worker.
    chance_[i] = delays.chance_within(static_cast<int>(i), limits_[i]).value_or(1.0);
  }
}

double MindFlayer::update_divisor(int kept) const {
  if (!published_ || chance_.empty()) return kept;
  double expected = 0.0;
  for (std::size_t i = 0; i < chance_.size(); ++i) {
    if (live_[i]) expected += chance_[i] * attempts_[i];
  }
  return expected > 0.0 ? expected : kept;
}

bool MindFlayer::complete() const {
  bool any = false;
  for (std::size_t i = 0; i < used_.size(); ++i) {
    if (!live_[i]) continue;
    if (used_[i] < attempts_[i]) return false;
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
  const auto w = static_cast<std::size_t>(a.worker);
  auto& used = used_[w];
  used += a.attempts;
  d.accept = !a.abandoned;
  if (d.accept) ++pending_;
  d.next = used >= attempts_[w] ? AfterPush::kWait : AfterPush::kContinue;
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
  return {limits_[w], std::max(1, attempts_[w] - used_[w])};
}

void MindFlayer::clear_round() {
  Rule::clear_round();
  used_.assign(used_.size(), 0);
}

void MindFlayer::save_state(RuleState& out) const {
  out.put("used", std::vector<std::int64_t>(used_.begin(), used_.end()));
  out.put("live", live_);
}

void MindFlayer::load_state(RuleState& in) {
  const auto n = static_cast<std::int64_t>(used_.size());
  const auto used = in.integers("used", n);
  const auto live = in.flags("live", n);
  if (!used || !live) return;
  for (std::size_t i = 0; i < used->size(); ++i) {
    const std::int64_t u = (*used)[i];
    if (u < 0 || u > attempts_[i]) return in.fail("a worker's attempts out of range");
  }
  used_.assign(used->begin(), used->end());
  live_ = *live;
}

namespace {

// Each worker's limit in seconds, from --time-limit (checked when the rule was resolved).
std::vector<double> limits_of(const RuleConfig& c) {
  auto limits = parse_time_limits(c.params.text("time-limit"), c.workers);
  return limits ? std::move(limits).value()
                : std::vector<double>(static_cast<std::size_t>(c.workers), 0.0);
}

// Each worker's B_i: --k for every worker, then --attempts' overrides ("w3=4;w0-1=1", the later
// clause winning, as in the delay language).
Result<std::vector<int>> parse_attempts(const RuleSpec& spec, int workers) {
  std::vector<int> b(static_cast<std::size_t>(workers), spec.k);
  if (!spec.params.has("attempts")) return b;
  const std::string text = spec.params.text("attempts");
  const auto fail = [&](std::string_view clause, const std::string& why) {
    return Error{fmt::format("--attempts '{}': clause '{}': {}", text, clause, why)};
  };
  for (const std::string_view c : spec::split(text, ';')) {
    const auto eq = c.find('=');
    if (eq == std::string_view::npos) {
      return fail(c, "no '='; write <workers>=<B>, e.g. w3=4 or w0-3=1 (--k is every other's B)");
    }
    auto target = spec::parse_target(spec::trim(c.substr(0, eq)), workers);
    if (!target) return fail(c, target.error().message);
    const std::string_view v = spec::trim(c.substr(eq + 1));
    int n = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || end != v.data() + v.size() || n < 1) {
      return fail(c, "B must be an integer >= 1");
    }
    for (int w = target->first; w <= target->second; ++w) b[static_cast<std::size_t>(w)] = n;
  }
  return b;
}

// Each worker's B_i (checked when the rule was resolved).
std::vector<int> attempts_of(const RuleConfig& c) {
  RuleSpec spec{c.rule, c.k};
  spec.params = c.params;
  auto b = parse_attempts(spec, c.workers);
  return b ? std::move(b).value() : std::vector<int>(static_cast<std::size_t>(c.workers), c.k);
}

// The published update divides by sum_i P(X_i <= t_i) B_i: every worker's delays must come from
// one distribution for the whole run.
Status check_published_delays(const RuleConfig& c, const StragglerProfile& delays) {
  const auto limits = limits_of(c);
  for (int w = 0; w < c.workers; ++w) {
    if (!delays.chance_within(w, limits[static_cast<std::size_t>(w)])) {
      return Error{fmt::format(
          "--rule mindflayer divides by the expected count of gradients kept, which needs each "
          "worker's delay distribution, but worker {}'s delays change over time or replay a "
          "trace; use --rule mindflayer-kept (the mean of the gradients kept)",
          w)};
    }
  }
  return {};
}

Result<RuleConfig> resolve_mindflayer(const RuleSpec& spec, int workers) {
  if (!spec.params.has("time-limit")) {
    return Error{fmt::format(
        "--rule {} needs --time-limit D: an attempt whose delay would exceed D is abandoned and "
        "a fresh one starts (one duration, or per worker as in --delay: 30ms;w3=90ms)",
        spec.name)};
  }
  if (spec.k == 0) {
    return Error{fmt::format(
        "--rule {} needs --k B, the attempts each worker makes per round (B >= 1)", spec.name)};
  }
  if (spec.k < 1) return Error{fmt::format("--k {} must be at least 1 (B >= 1)", spec.k)};
  auto limits = parse_time_limits(spec.params.text("time-limit"), workers);
  if (!limits) return limits.error();
  if (auto b = parse_attempts(spec, workers); !b) return b.error();
  return RuleConfig{spec.name, workers, spec.k, spec.params};
}

}  // namespace

namespace {

// Both forms: the same rounds, attempts, limits, theory and options; only the update's divisor
// and what the delays must be differ.
RuleInfo mindflayer_info(bool published) {
  return {.name = published ? "mindflayer" : "mindflayer-kept",
          .summary = published ? "MindFlayer SGD as published: B = --k attempts per worker and "
                                 "round, each cut at --time-limit; sum / expected count"
                               : "MindFlayer SGD with the mean of the gradients kept (not the "
                                 "expected count), for delays of unknown distribution",
          .synchronous = true,
          .k = KChoice::kGiven,
          .make = [published](const RuleConfig& c) -> std::unique_ptr<Rule> {
            return std::make_unique<MindFlayer>(attempts_of(c), limits_of(c), published);
          },
          // The paper's round: worker i's B_i attempts take at most B_i t_i, so
          // E[T] <= max_i B_i t_i.
          .closed_form = [](const RuleConfig& c, const Distribution&) -> std::optional<ClosedForm> {
            const auto limits = limits_of(c);
            const auto b = attempts_of(c);
            double round = 0.0;
            for (std::size_t i = 0; i < limits.size(); ++i)
              round = std::max(round, b[i] * limits[i]);
            return ClosedForm{round, "<= max_i B_i t_i (every attempt at its limit)", true};
          },
          // Fixed times: every attempt of worker i takes min(tau_i, t_i) (kept when tau_i <= t_i).
          .fixed_form = [](const RuleConfig& c,
                           std::span<const double> times) -> std::optional<ClosedForm> {
            const auto limits = limits_of(c);
            const auto b = attempts_of(c);
            double round = 0.0;
            for (std::size_t i = 0; i < times.size() && i < limits.size(); ++i) {
              round = std::max(round, b[i] * std::min(times[i], limits[i]));
            }
            return ClosedForm{round, "max_i B_i min(tau_i, t_i)"};
          },
          .options = {{.name = "time-limit",
                       .type = RuleOptionType::kString,
                       .help = "an attempt past D is abandoned, a fresh one starts (D, or "
                               "D;w3=D2)",
                       .choices = {},
                       .expects = {}},
                      {.name = "attempts",
                       .type = RuleOptionType::kString,
                       .help = "per-worker B_i where it is not --k, as in --delay: w3=4;w0-1=1",
                       .choices = {},
                       .expects = {}}},
          .resolve = resolve_mindflayer,
          // B is per worker, whatever P; the workers kept keep their limits and B_i, new ones
          // take worker 0's limit and --k.
          .at_workers = [](RuleConfig c, int workers) -> Result<RuleConfig> {
            auto limits = limits_of(c);
            auto b = attempts_of(c);
            limits.resize(static_cast<std::size_t>(workers), limits.front());
            b.resize(static_cast<std::size_t>(workers), c.k);
            c.workers = workers;
            c.params.set("time-limit", describe_time_limits(limits));
            std::string overrides;
            for (std::size_t w = 0; w < b.size(); ++w) {
              if (b[w] != c.k)
                overrides += fmt::format("{}w{}={}", overrides.empty() ? "" : ";", w, b[w]);
            }
            if (!overrides.empty()) {
              c.params.set("attempts", overrides);
            } else if (c.params.has("attempts")) {  // the workers it named are gone
              RuleParams kept;
              for (const auto& [name, value] : c.params.values()) {
                if (name != "attempts") kept.set(name, value);
              }
              c.params = kept;
            }
            return c;
          },
          .check_delays = published ? check_published_delays : nullptr};
}

}  // namespace

RuleInfo mindflayer_rule() {
  return mindflayer_info(true);
}

RuleInfo mindflayer_kept_rule() {
  return mindflayer_info(false);
}

}  // namespace stalesgd
