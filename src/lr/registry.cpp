// Parses --lr-rule text into a LearningRate; errors are one line naming the fix.
#include <charconv>
#include <cmath>
#include <map>
#include <string>

#include <fmt/format.h>

#include "lr/schedules.hpp"

namespace stalesgd {
namespace {

constexpr const char* kRules =
    "fixed, step:every=N,factor=F, exp:decay=D, inv-staleness, dutta:c=C, "
    "delay-adaptive:c=C[,L=L]";

// "every=1000,factor=0.5" -> {every: 1000, factor: 0.5}
Result<std::map<std::string, double>> parse_params(std::string_view rule, std::string_view text) {
  std::map<std::string, double> params;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return Error{
          fmt::format("--lr-rule '{}': '{}' is not key=value; use one of: {}", rule, item, kRules)};
    }
    const std::string key(item.substr(0, eq));
    const std::string value(item.substr(eq + 1));
    double v = 0.0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(v)) {
      return Error{fmt::format("--lr-rule '{}': '{}' is not a number for {}", rule, value, key)};
    }
    params[key] = v;
  }
  return params;
}

Result<double> take(std::map<std::string, double>& params, const std::string& key,
                    std::string_view rule, std::string_view usage) {
  auto it = params.find(key);
  if (it == params.end()) {
    return Error{fmt::format("--lr-rule '{}': missing {}; write {}", rule, key, usage)};
  }
  const double v = it->second;
  params.erase(it);
  return v;
}

}  // namespace

Result<std::unique_ptr<LearningRate>> make_learning_rate(double base, std::string_view rule) {
  if (!(base > 0.0) || !std::isfinite(base)) {
    return Error{fmt::format("--lr {} must be a positive number, e.g. --lr 0.05", base)};
  }
  const auto colon = rule.find(':');
  const std::string_view name = rule.substr(0, colon);
  auto parsed = parse_params(
      rule, colon == std::string_view::npos ? std::string_view{} : rule.substr(colon + 1));
  if (!parsed) return parsed.error();
  auto& params = *parsed;
  std::unique_ptr<LearningRate> lr;
  if (name == "fixed") {
    lr = make_fixed_rate(base);
  } else if (name == "step") {
    constexpr const char* usage = "step:every=N,factor=F, e.g. step:every=1000,factor=0.5";
    auto every = take(params, "every", rule, usage);
    if (!every) return every.error();
    auto factor = take(params, "factor", rule, usage);
    if (!factor) return factor.error();
    // every above 2^64 made the cast below undefined (a fuzzer finding, docs/reliability.md);
    // 1e18 updates is far beyond any run, so no schedule loses anything by the cap.
    if (*every < 1 || *every > 1e18 || *every != std::floor(*every) ||
        !(*factor > 0.0 && *factor <= 1.0)) {
      return Error{fmt::format(
          "--lr-rule '{}': need a whole every from 1 to 1e18 and 0 < factor <= 1", rule)};
    }
    lr = make_step_decay(base, static_cast<std::uint64_t>(*every), *factor);
  } else if (name == "exp") {
    auto decay = take(params, "decay", rule, "exp:decay=D, e.g. exp:decay=0.9995");
    if (!decay) return decay.error();
    if (!(*decay > 0.0 && *decay <= 1.0)) {
      return Error{
          fmt::format("--lr-rule '{}': decay must be in (0, 1], e.g. exp:decay=0.9995", rule)};
    }
    lr = make_exponential_decay(base, *decay);
  } else if (name == "inv-staleness") {
    lr = make_inverse_staleness(base);
  } else if (name == "dutta") {
    auto c = take(params, "c", rule, "dutta:c=C, e.g. dutta:c=0.01 (--lr is the cap lr_max)");
    if (!c) return c.error();
    if (!(*c > 0.0)) return Error{fmt::format("--lr-rule '{}': c must be positive", rule)};
    lr = make_staleness_distance(base, *c);
  } else if (name == "delay-adaptive") {
    auto c = take(params, "c", rule, "delay-adaptive:c=C, e.g. delay-adaptive:c=8 (C: P)");
    if (!c) return c.error();
    if (!(*c >= 1.0)) return Error{fmt::format("--lr-rule '{}': c must be at least 1", rule)};
    // L given: the paper's own rate 1 / (4 L C) in place of --lr (docs/rules.md, "Learning
    // rates"); L is the smoothness that `stalesgd theory --error` estimates.
    if (const auto l = params.find("L"); l != params.end()) {
      const double smoothness = l->second;
      params.erase(l);
      if (!(smoothness > 0.0)) {
        return Error{
            fmt::format("--lr-rule '{}': L must be positive, e.g. delay-adaptive:c=8,L=2.5", rule)};
      }
      base = 1.0 / (4.0 * smoothness * *c);
    }
    lr = make_delay_adaptive(base, *c);
  } else {
    return Error{fmt::format("unknown --lr-rule '{}'; use one of: {}", name, kRules)};
  }
  if (!params.empty()) {
    return Error{fmt::format("--lr-rule '{}': unknown parameter '{}' for {}; use one of: {}", rule,
                             params.begin()->first, name, kRules)};
  }
  return lr;
}

}  // namespace stalesgd
