// Times with a unit: "10ms" <-> 0.01 s. Parsing divides by the unit's exact power of ten
// (correctly rounded), and format_duration only picks a unit that maps back exactly.
#include "stalesgd/straggler/duration.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

#include "straggler/spec_text.hpp"

namespace stalesgd {
namespace {

struct Unit {
  std::string_view name;
  double per_second;  // units in one second
};
constexpr std::array<Unit, 4> kUnits{{{"s", 1.0}, {"ms", 1e3}, {"us", 1e6}, {"ns", 1e9}}};
constexpr std::string_view kUnitList = "ns, us, ms, s, m, h";
constexpr std::string_view kUnitChoice = "ns, us, ms, s, m or h";

}  // namespace

namespace {

// Minutes and hours, for --time and friends: parsed, never written (format_duration keeps to
// the four units above, so recorded command lines read as before).
struct LongUnit {
  std::string_view name;
  double seconds;  // seconds in one unit
};
constexpr std::array<LongUnit, 2> kLongUnits{{{"m", 60.0}, {"h", 3600.0}}};

// One "<number><unit>" term at the front of `text`: its seconds and the unit's size in seconds
// (for the order check), or an Error; `text` moves past it.
Result<std::pair<double, double>> parse_term(std::string_view& text, const std::string& shown) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::invalid_argument) {
    return Error{fmt::format("time '{}' is not a number with a unit; write e.g. 10ms", shown)};
  }
  const std::string_view number = text.substr(0, static_cast<std::size_t>(end - text.data()));
  if (ec == std::errc::result_out_of_range) {
    return Error{fmt::format("time '{}' is out of range; write a finite time, e.g. 10ms", shown)};
  }
  text = spec::trim(text.substr(number.size()));
  std::size_t letters = 0;
  while (letters < text.size() && std::isalpha(static_cast<unsigned char>(text[letters]))) {
    ++letters;
  }
  // Up to the next term ("1h30m", "1h 30m"); anything else after the letters stays in the unit.
  std::size_t next = letters;
  while (next < text.size() && text[next] == ' ') ++next;
  const bool term_follows =
      next < text.size() && (std::isdigit(static_cast<unsigned char>(text[next])) ||
                             text[next] == '.' || text[next] == '-' || text[next] == '+');
  const std::size_t unit_end = letters > 0 && term_follows ? letters : text.size();
  const std::string_view unit = spec::trim(text.substr(0, unit_end));
  text = spec::trim(text.substr(unit_end));
  if (unit.empty()) {
    return Error{fmt::format("time '{}' has no unit; write {}ms or {}s (units: {})", shown, number,
                             number, kUnitList)};
  }
  double seconds = -1.0;
  double size = 0.0;
  for (const Unit& u : kUnits) {
    if (u.name == unit) seconds = v / u.per_second, size = 1.0 / u.per_second;
  }
  for (const LongUnit& u : kLongUnits) {
    if (u.name == unit) seconds = v * u.seconds, size = u.seconds;
  }
  if (size == 0.0) {
    return Error{fmt::format("time '{}' has unknown unit '{}'; use {}, e.g. 10ms", shown,
                             spec::printable(unit), kUnitChoice)};
  }
  if (!std::isfinite(v)) {
    return Error{fmt::format("time '{}' is not finite; write a finite time, e.g. 10ms", shown)};
  }
  if (v < 0) {
    return Error{fmt::format("time '{}' is negative; times must be >= 0, e.g. 10ms", shown)};
  }
  return std::pair{seconds + 0.0, size};  // + 0.0 turns -0 into 0
}

}  // namespace

Result<double> parse_duration(std::string_view text) {
  text = spec::trim(text);
  const std::string shown = spec::printable(text);
  if (text.empty()) {
    return Error{
        fmt::format("missing time; write a number with a unit, e.g. 10ms (units: {})", kUnitList)};
  }
  // "1h30m": terms from the largest unit down, each unit once.
  double seconds = 0.0;
  double last_size = std::numeric_limits<double>::infinity();
  while (!text.empty()) {
    auto term = parse_term(text, shown);
    if (!term) return term.error();
    if (term->second >= last_size) {
      return Error{fmt::format(
          "time '{}' repeats a unit or puts a smaller one first; write the largest first, e.g. "
          "1h30m",
          shown)};
    }
    last_size = term->second;
    seconds += term->first;
  }
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
