// Applying CLI text and TOML values through the option table, and summary.json's "config"
// from it (the declarations are in train_option_decls.cpp).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "config/option_table.hpp"
#include "stalesgd/straggler/duration.hpp"

namespace stalesgd {
namespace {

constexpr std::int64_t kNoMax = std::numeric_limits<std::int64_t>::max();

bool is_integral_type(OptionType type) {
  return type == OptionType::kInteger || type == OptionType::kUnsigned;
}

// "pad or add", "inline, thread or hogwild"; TOML quotes the words as strings.
std::string choice_list(const OptionDecl& d, bool toml) {
  std::string s;
  for (std::size_t i = 0; i < d.choices.size(); ++i) {
    if (i > 0) s += i + 1 == d.choices.size() ? " or " : ", ";
    s += toml ? fmt::format("\"{}\"", d.choices[i]) : std::string(d.choices[i]);
  }
  return s;
}

// What a valid value looks like, after "must be ".
std::string expects(const OptionDecl& d, bool toml) {
  if (!d.expects.empty()) return std::string(d.expects);
  switch (d.type) {
    case OptionType::kString:
      return "a string";
    case OptionType::kInteger:
      return d.max == kNoMax ? fmt::format("an integer >= {}", d.min)
                             : fmt::format("an integer from {} to {}", d.min, d.max);
    case OptionType::kUnsigned:
      return "an integer >= 0";
    case OptionType::kNumber:
      return "a finite number";
    case OptionType::kDuration:
      return toml ? "a duration string with a unit, e.g. \"20s\" or \"500ms\""
                  : "a duration with a unit, e.g. 20s or 500ms";
    case OptionType::kChoice:
      return choice_list(d, toml);
    case OptionType::kIntList:
      return toml ? fmt::format("an array of integers from {} to {}, e.g. [256, 128]", d.min, d.max)
                  : fmt::format("a comma-separated list of integers from {} to {}, e.g. 256,128",
                                d.min, d.max);
    case OptionType::kSwitch:
      return "true or false";
  }
  return "?";
}

Error must_be(const OptionDecl& d, bool toml) {
  return Error{"must be " + expects(d, toml)};
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The whole of `text` as a T, or nullopt.
template <class T>
std::optional<T> parse_whole(std::string_view text) {
  T v{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// Range and finiteness checks shared by the CLI and TOML paths.
Result<OptionValue> checked_integer(const OptionDecl& d, std::int64_t v, bool toml) {
  if (v < d.min || v > d.max) return must_be(d, toml);
  return OptionValue{v};
}

Result<OptionValue> checked_list(const OptionDecl& d, std::vector<std::int64_t> items, bool toml) {
  std::vector<int> list;
  if (items.empty()) return must_be(d, toml);
  for (std::int64_t v : items) {
    if (v < d.min || v > d.max) return must_be(d, toml);
    list.push_back(static_cast<int>(v));
  }
  return OptionValue{std::move(list)};
}

Result<OptionValue> checked_choice(const OptionDecl& d, std::string_view w, bool toml) {
  for (std::string_view c : d.choices) {
    if (c == w) return OptionValue{std::string(w)};
  }
  return must_be(d, toml);
}

// The value of CLI `text`; the error is "must be ..." or parse_duration's message.
Result<OptionValue> parse_text(const OptionDecl& d, std::string_view text) {
  const std::string_view t = trim(text);
  switch (d.type) {
    case OptionType::kString:
      return OptionValue{std::string(text)};
    case OptionType::kInteger: {
      auto v = parse_whole<std::int64_t>(t);
      if (!v) return must_be(d, false);
      return checked_integer(d, *v, false);
    }
    case OptionType::kUnsigned: {
      auto v = parse_whole<std::uint64_t>(t);
      if (!v) return must_be(d, false);
      return OptionValue{*v};
    }
    case OptionType::kNumber: {
      auto v = parse_whole<double>(t);
      if (!v || !std::isfinite(*v)) return must_be(d, false);
      return OptionValue{*v};
    }
    case OptionType::kDuration: {
      auto v = parse_duration(t);
      if (!v) return v.error();
      return OptionValue{*v};
    }
    case OptionType::kChoice:
      return checked_choice(d, t, false);
    case OptionType::kIntList: {
      std::vector<std::int64_t> items;
      for (std::size_t start = 0;;) {
        const std::size_t comma = t.find(',', start);
        auto v = parse_whole<std::int64_t>(trim(t.substr(start, comma - start)));
        if (!v) return must_be(d, false);
        items.push_back(*v);
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
      return checked_list(d, std::move(items), false);
    }
    case OptionType::kSwitch:
      if (t == "true" || t == "false") return OptionValue{t == "true"};
      return must_be(d, false);
  }
  return must_be(d, false);
}

// The value of a TOML node; types must match exactly (a string is never read as a number).
Result<OptionValue> parse_toml(const OptionDecl& d, const toml::node& n) {
  switch (d.type) {
    case OptionType::kString:
    case OptionType::kChoice: {
      auto v = n.value_exact<std::string>();
      if (!v) return must_be(d, true);
      if (d.type == OptionType::kChoice) return checked_choice(d, *v, true);
      return OptionValue{*v};
    }
    case OptionType::kInteger:
    case OptionType::kUnsigned: {
      auto v = n.value_exact<std::int64_t>();
      if (!v) return must_be(d, true);
      if (d.type == OptionType::kInteger) return checked_integer(d, *v, true);
      if (*v < 0) return must_be(d, true);
      return OptionValue{static_cast<std::uint64_t>(*v)};
    }
    case OptionType::kNumber: {
      if (!n.is_integer() && !n.is_floating_point()) return must_be(d, true);
      auto v = n.value<double>();  // integers widen
      if (!v || !std::isfinite(*v)) return must_be(d, true);
      return OptionValue{*v};
    }
    case OptionType::kDuration: {
      auto v = n.value_exact<std::string>();
      if (!v) return must_be(d, true);
      auto s = parse_duration(*v);
      if (!s) return Error{fmt::format("must be {}: {}", expects(d, true), s.error().message)};
      return OptionValue{*s};
    }
    case OptionType::kIntList: {
      const auto* a = n.as_array();
      if (a == nullptr) return must_be(d, true);
      std::vector<std::int64_t> items;
      for (const auto& e : *a) {
        auto v = e.value_exact<std::int64_t>();
        if (!v) return must_be(d, true);
        items.push_back(*v);
      }
      return checked_list(d, std::move(items), true);
    }
    case OptionType::kSwitch: {
      auto v = n.value_exact<bool>();
      if (!v) return must_be(d, true);
      return OptionValue{*v};
    }
  }
  return must_be(d, true);
}

// The value as the user wrote it in a message: bare when it is a number, else quoted.
std::string shown(const OptionDecl& d, std::string_view text) {
  const bool number = (is_integral_type(d.type) || d.type == OptionType::kNumber) &&
                      !text.empty() &&
                      text.find_first_not_of("0123456789+-.eE") == std::string_view::npos;
  return number ? std::string(text) : fmt::format("'{}'", text);
}

}  // namespace

std::string option_key(const OptionDecl& option) {
  std::string key(option.name);
  for (char& c : key) {
    if (c == '-') c = '_';
  }
  return key;
}

Status set_from_text(const OptionDecl& option, std::string_view text, TrainerOptions& options) {
  auto v = parse_text(option, text);
  if (!v) {
    return Error{fmt::format("--{} {}: {}", option.name, shown(option, text), v.error().message)};
  }
  option.set(options, *v);
  return {};
}

void set_switch(const OptionDecl& option, bool on, TrainerOptions& options) {
  option.set(options, OptionValue{on});
}

Status set_from_toml(const OptionDecl& option, const toml::node& node, TrainerOptions& options) {
  auto v = parse_toml(option, node);
  if (!v) return v.error();
  option.set(options, *v);
  return {};
}

nlohmann::json options_to_json(const TrainerOptions& options) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& d : train_options()) {
    if (!d.json) continue;
    if (auto v = d.get(options)) {
      j[option_key(d)] = std::visit([](const auto& x) { return nlohmann::json(x); }, *v);
    }
  }
  return j;
}

std::vector<std::string> options_to_args(const TrainerOptions& options) {
  std::vector<std::string> args;
  for (const auto& d : train_options()) {
    if (!d.json) continue;
    const auto v = d.get(options);
    if (!v) continue;
    const std::string flag = "--" + std::string(d.name);
    if (d.type == OptionType::kSwitch) {
      if (std::get<bool>(*v)) args.push_back(flag);
      continue;
    }
    std::string text;
    if (d.type == OptionType::kDuration) {
      text = format_duration(std::get<double>(*v));
    } else if (const auto* list = std::get_if<std::vector<int>>(&*v)) {
      text = fmt::format("{}", fmt::join(*list, ","));
    } else if (const auto* number = std::get_if<double>(&*v)) {
      text = fmt::format("{:.17g}", *number);  // round-trips exactly
    } else {
      text = std::visit([](const auto& x) { return fmt::format("{}", x); }, *v);
    }
    // `clock` reads "sequential" in summary.json, which no --clock takes: --sequential says it.
    if (d.type == OptionType::kChoice &&
        std::find(d.choices.begin(), d.choices.end(), text) == d.choices.end()) {
      continue;
    }
    args.push_back(flag);
    args.push_back(std::move(text));
  }
  return args;
}

}  // namespace stalesgd
