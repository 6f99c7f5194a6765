// Times with a unit: "10ms" <-> 0.01 s. Parsing divides by the unit's exact power of ten
// (correctly rounded), and format_duration only picks a unit that maps back exactly.
#include "stalesgd/straggler/duration.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>

#include "straggler/spec_text.hpp"

namespace stalesgd {
namespace {

struct Unit {
  std::string_view name;
  double per_second;  // units in one second
};
constexpr std::array<Unit, 4> kUnits{{{"s", 1.0}, {"ms", 1e3}, {"us", 1e6}, {"ns", 1e9}}};

}  // namespace

Result<double> parse_duration(std::string_view text) {
  text = spec::trim(text);
  const std::string shown = spec::printable(text);
  if (text.empty()) {
    return Error{"missing time; write a number with a unit, e.g. 10ms (units: ns, us, ms, s)"};
  }
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::invalid_argument) {
    return Error{fmt::format("time '{}' is not a number with a unit; write e.g. 10ms", shown)};
  }
  const std::string_view number = text.substr(0, static_cast<std::size_t>(end - text.data()));
  const std::string_view unit = spec::trim(text.substr(number.size()));
  if (ec == std::errc::result_out_of_range) {
    return Error{fmt::format("time '{}' is out of range; write a finite time, e.g. 10ms", shown)};
  }
  if (unit.empty()) {
    return Error{fmt::format("time '{}' has no unit; write {}ms or {}s (units: ns, us, ms, s)",
                             shown, number, number)};
  }
  const Unit* found = nullptr;
  for (const Unit& u : kUnits) {
    if (u.name == unit) found = &u;
  }
  if (found == nullptr) {
    return Error{fmt::format("time '{}' has unknown unit '{}'; use ns, us, ms or s, e.g. 10ms",
                             shown, spec::printable(unit))};
  }
  if (!std::isfinite(v)) {
    return Error{fmt::format("time '{}' is not finite; write a finite time, e.g. 10ms", shown)};
  }
  if (v < 0) {
    return Error{fmt::format("time '{}' is negative; times must be >= 0, e.g. 10ms", shown)};
  }
  const double seconds = v / found->per_second + 0.0;  // + 0.0 turns -0 into 0
  if (seconds > kMaxDurationSeconds) {
    return Error{
        fmt::format("time '{}' is longer than {:g}s (about 31 years), the longest the "
                    "run's clocks hold; write a shorter time",
                    shown, kMaxDurationSeconds)};
  }
  return seconds;
}

std::string format_duration(double seconds) {
  if (seconds == 0) return "0s";
  // The unit that puts the value in [1, 1000) reads best ("200ms", not "0.2s"); if its value
  // does not map back exactly (or none does), the shortest exact text wins.
  std::string natural;
  std::string shortest;
  for (const Unit& u : kUnits) {
    const double v = seconds * u.per_second;
    if (!std::isfinite(v) || v / u.per_second != seconds) continue;
    std::string text = spec::format_number(v) + std::string(u.name);
    if (v >= 1 && v < 1000) natural = text;
    if (shortest.empty() || text.size() < shortest.size()) shortest = std::move(text);
  }
  return natural.empty() ? shortest : natural;  // never both empty: seconds maps back exactly
}

}  // namespace stalesgd
