// --time-limit's grammar and the draw of attempts under it (time_limit.hpp).
#include "stalesgd/straggler/time_limit.hpp"

#include <fmt/format.h>

#include "stalesgd/straggler/duration.hpp"
#include "stalesgd/straggler/profile.hpp"
#include "straggler/spec_text.hpp"
#include "straggler/worker_target.hpp"

namespace stalesgd {
namespace {

Result<double> parse_limit(std::string_view text) {
  auto d = parse_duration(spec::trim(text));
  if (!d) return d.error();
  if (*d <= 0.0) return Error{"a limit must be above 0; e.g. 30ms"};
  return *d;
}

}  // namespace

Result<std::vector<double>> parse_time_limits(std::string_view text, int workers) {
  const auto fail = [&](std::string_view clause, const std::string& why) {
    return Error{fmt::format("--time-limit '{}': clause '{}': {}", spec::printable(text),
                             spec::printable(clause), why)};
  };
  const auto clauses = spec::split(text, ';');
  auto base = parse_limit(clauses[0]);
  if (!base) return fail(clauses[0], base.error().message);
  std::vector<double> limits(static_cast<std::size_t>(workers), *base);
  for (std::size_t i = 1; i < clauses.size(); ++i) {
    const std::string_view c = clauses[i];
    const auto eq = c.find('=');
    if (eq == std::string_view::npos) {
      return fail(c, "no '='; write <workers>=<time>, e.g. w3=90ms or w0-3=10ms");
    }
    auto target = spec::parse_target(spec::trim(c.substr(0, eq)), workers);
    if (!target) return fail(c, target.error().message);
    auto limit = parse_limit(c.substr(eq + 1));
    if (!limit) return fail(c, limit.error().message);
    for (int w = target->first; w <= target->second; ++w) {
      limits[static_cast<std::size_t>(w)] = *limit;
    }
  }
  return limits;
}

std::string describe_time_limits(const std::vector<double>& limits) {
  if (limits.empty()) return {};
  std::string out = format_duration(limits[0]);
  for (std::size_t w = 1; w < limits.size(); ++w) {
    if (limits[w] != limits[0]) out += fmt::format(";w{}={}", w, format_duration(limits[w]));
  }
  return out;
}

Attempts draw_attempts(DelaySampler& delays, double now_s, const AttemptBudget& budget) {
  Attempts a;
  a.delay_s = delays.next(now_s);
  if (!budget.limited()) return a;
  // A computation past its limit is dropped there and a fresh one begins on a new draw.
  while (a.delay_s > budget.limit_s && a.attempts < budget.attempts) {
    a.offset_s += budget.limit_s;
    a.delay_s = delays.next(now_s + a.offset_s);
    ++a.attempts;
  }
  if (a.delay_s > budget.limit_s) {
    a.abandoned = true;
    a.delay_s = budget.limit_s;
  }
  a.delay_s += a.offset_s;
  return a;
}

}  // namespace stalesgd
