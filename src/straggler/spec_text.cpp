// Text helpers for the delay-spec parsers (see spec_text.hpp).
#include "straggler/spec_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "stalesgd/straggler/duration.hpp"

namespace stalesgd::spec {

std::string_view trim(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

Result<double> parse_number(std::string_view text, std::string_view what) {
  text = trim(text);
  if (text.empty()) return Error{fmt::format("{} is empty; write a number, e.g. 1.5", what)};
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::result_out_of_range) {
    return Error{fmt::format("{} '{}' is out of range; write a finite number, e.g. 1.5", what,
                             printable(text))};
  }
  if (ec != std::errc() || end != text.data() + text.size()) {
    return Error{fmt::format("{} '{}' is not a number; write a plain number, e.g. 1.5", what,
                             printable(text))};
  }
  if (!std::isfinite(v)) {
    return Error{fmt::format("{} '{}' is not finite; write a finite number, e.g. 1.5", what,
                             printable(text))};
  }
  return v;
}

std::string format_number(double v) {
  return fmt::format("{}", v);
}

Result<ParamList> ParamList::parse(std::string_view text, const Family& family,
                                   std::initializer_list<std::string_view> keys) {
  ParamList out;
  out.family_ = family;
  for (std::string_view item : split(text, ',')) {
    item = trim(item);
    const auto eq = item.find('=');
    if (item.empty() || eq == std::string_view::npos) {
      return Error{fmt::format("{} parameter '{}' is not key=value; use {}", family.name,
                               printable(item), family.usage)};
    }
    const std::string_view key = trim(item.substr(0, eq));
    const std::string_view value = trim(item.substr(eq + 1));
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      return Error{fmt::format("unknown parameter '{}' for {}; use {}", printable(key), family.name,
                               family.usage)};
    }
    if (out.has(key)) {
      return Error{fmt::format("parameter '{}' of {} is given twice; use {}", key, family.name,
                               family.usage)};
    }
    out.items_.emplace_back(key, value);
  }
  return out;
}

bool ParamList::has(std::string_view key) const {
  return std::any_of(items_.begin(), items_.end(), [&](const auto& kv) { return kv.first == key; });
}

Result<std::string_view> ParamList::raw(std::string_view key) const {
  for (const auto& [k, v] : items_) {
    if (k == key) return v;
  }
  return Error{
      fmt::format("missing parameter '{}' for {}; use {}", key, family_.name, family_.usage)};
}

Result<double> ParamList::time(std::string_view key, Bound bound) const {
  auto text = raw(key);
  if (!text) return text.error();
  auto v = parse_duration(*text);
  if (!v) return Error{fmt::format("{} {}: {}", family_.name, key, v.error().message)};
  if (bound == Bound::kPositive && *v <= 0) return bound_error(family_, key, *text, bound);
  return v;
}

Result<double> ParamList::number(std::string_view key, Bound bound) const {
  auto text = raw(key);
  if (!text) return text.error();
  auto v = parse_number(*text, fmt::format("{} {}", family_.name, key));
  if (!v) return v.error();
  if ((bound == Bound::kPositive && *v <= 0) || *v < 0)
    return bound_error(family_, key, *text, bound);
  return v;
}

Error bound_error(const Family& family, std::string_view what, std::string_view text, Bound bound) {
  return Error{fmt::format("{} {} must be {}, got '{}'; use {}", family.name, what,
                           bound == Bound::kPositive ? "> 0" : ">= 0", printable(text),
                           family.usage)};
}

}  // namespace stalesgd::spec
