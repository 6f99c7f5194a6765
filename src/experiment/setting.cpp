// A key's value or sweep, from the file or from `race --set`: parsed and checked once.
#include "experiment/setting.hpp"

#include <algorithm>
#include <climits>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "stalesgd/straggler/duration.hpp"
#include "util/did_you_mean.hpp"

namespace stalesgd {
namespace {

namespace fs = std::filesystem;

// Sweeps are ordered by where their key was written: --set after the file, seed last.
constexpr long kSetLine = LONG_MAX - 1;
constexpr long kSeedLine = LONG_MAX;

std::string where(const fs::path& file, const toml::node& node) {
  return fmt::format("{}:{}", file.string(), node.source().begin.line);
}

}  // namespace

std::string shown_value(const toml::node& node) {
  std::ostringstream value;
  node.visit([&](const auto& v) {
    if constexpr (toml::is_value<decltype(v)>) value << v;  // as TOML writes it
  });
  switch (node.type()) {
    case toml::node_type::string:
      return "the string " + value.str();
    case toml::node_type::integer:
      return "the integer " + value.str();
    case toml::node_type::floating_point:
      return "the number " + value.str();
    case toml::node_type::boolean:
      return value.str();
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    default:  // dates and times
      return "the date or time " + value.str();
  }
}

namespace {

// Whether `node` has the TOML type `option` takes (its value may still be out of range).
bool has_toml_type(const OptionDecl& option, const toml::node& node) {
  switch (option.type) {
    case OptionType::kString:
    case OptionType::kChoice:
    case OptionType::kDuration:
      return node.is_string();
    case OptionType::kInteger:
    case OptionType::kUnsigned:
      return node.is_integer();
    case OptionType::kNumber:
      return node.is_integer() || node.is_floating_point();
    case OptionType::kIntList:
      return node.is_array();
    case OptionType::kSwitch:
      return node.is_boolean();
  }
  return false;
}

// A value as a label shows it: strings bare, lists "256,128".
std::string node_text(const toml::node& node) {
  if (auto s = node.value_exact<std::string>()) return *s;
  if (auto i = node.value_exact<std::int64_t>()) return fmt::format("{}", *i);
  if (auto d = node.value_exact<double>()) return fmt::format("{}", *d);
  if (auto b = node.value_exact<bool>()) return *b ? "true" : "false";
  if (const auto* a = node.as_array()) {
    std::vector<std::string> items;
    for (const auto& e : *a) items.push_back(node_text(e));
    return fmt::format("{}", fmt::join(items, ","));
  }
  return shown_value(node);
}

// A list key (hidden) holds one list; only a list of lists sweeps it.
bool is_sweep(const OptionDecl& option, const toml::node& node) {
  const auto* a = node.as_array();
  if (a == nullptr) return false;
  if (option.type != OptionType::kIntList) return true;
  return !a->empty() && (*a)[0].is_array();
}

Status check_toml_value(const fs::path& file, const OptionDecl& option, const toml::node& node) {
  TrainerOptions scratch;
  if (auto s = set_from_toml(option, node, scratch); !s) {
    // A value of the wrong type says what it is; one of the right type was out of range.
    const std::string what =
        has_toml_type(option, node) ? std::string() : ", not " + shown_value(node);
    return Error{fmt::format("{}: key '{}' {}{}", where(file, node), option_key(option),
                             s.error().message, what)};
  }
  return {};
}

// `seeds = [1, 2, 3]`: the sweep of `seed`.
Result<Setting> seeds_setting(const fs::path& file, const toml::node& node) {
  const auto* a = node.as_array();
  if (a == nullptr || a->empty()) {
    return Error{
        fmt::format("{}: key 'seeds' must be a non-empty array of integers, e.g. [1, 2, 3], not {}",
                    where(file, node), a == nullptr ? shown_value(node) : "an empty array")};
  }
  Setting s{experiment_option("seed"), {}, true, {kSeedLine, 0}};
  for (const auto& e : *a) {
    auto v = e.value_exact<std::int64_t>();
    if (!v || *v < 0) {
      return Error{fmt::format("{}: key 'seeds' must hold integers >= 0", where(file, node))};
    }
    s.values.push_back({&e, fmt::format("{}", *v), where(file, e)});
  }
  return s;
}

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// "a, \"b,c\", [1,2]" -> {"a", "b,c", "[1,2]"}: commas inside brackets or quotes do not split.
std::vector<std::string> split_list(std::string_view inner) {
  std::vector<std::string> items;
  std::string item;
  int depth = 0;
  bool quoted = false;
  for (char c : inner) {
    if (c == '"') quoted = !quoted;
    if (!quoted && c == '[') ++depth;
    if (!quoted && c == ']') --depth;
    if (c == ',' && depth == 0 && !quoted) {
      items.emplace_back(trim(item));
      item.clear();
    } else {
      item += c;
    }
  }
  if (!trim(item).empty() || !items.empty()) items.emplace_back(trim(item));
  for (auto& i : items) {
    if (i.size() >= 2 && i.front() == '"' && i.back() == '"') i = i.substr(1, i.size() - 2);
  }
  return items;
}

bool bracketed(std::string_view s) {
  return s.size() >= 2 && s.front() == '[' && s.back() == ']';
}

}  // namespace

const OptionDecl* experiment_option(std::string_view key) {
  for (const auto& d : train_options()) {
    if (d.toml && option_key(d) == key) return &d;
  }
  return nullptr;
}

std::string did_you_mean(std::string_view key) {
  std::vector<std::string> keys;
  for (const auto& d : train_options()) {
    if (d.toml) keys.push_back(option_key(d));
  }
  return did_you_mean(key, keys);
}

std::string known_experiment_keys() {
  std::string keys;
  for (const auto& d : train_options()) {
    if (d.toml) keys += (keys.empty() ? "" : ", ") + option_key(d);
  }
  return keys;
}

Result<Setting> setting_from_toml(const fs::path& file, std::string_view key,
                                  const toml::node& node) {
  if (key == "seeds") return seeds_setting(file, node);
  const OptionDecl* option = experiment_option(key);
  const auto& begin = node.source().begin;
  Setting s{option, {}, is_sweep(*option, node), {begin.line, begin.column}};
  if (option_key(*option) == "seed") s.order = {kSeedLine, 0};
  if (!s.list) {
    if (auto c = check_toml_value(file, *option, node); !c) return c.error();
    s.values.push_back({&node, node_text(node), where(file, node)});
    return s;
  }
  const auto& a = *node.as_array();
  if (a.empty()) {
    return Error{fmt::format("{}: key '{}' is an empty list; a sweep needs at least one value",
                             where(file, node), key)};
  }
  for (const auto& e : a) {
    if (auto c = check_toml_value(file, *option, e); !c) return c.error();
    s.values.push_back({&e, node_text(e), where(file, e)});
  }
  return s;
}

Result<Setting> setting_from_arg(std::string_view arg, std::size_t index) {
  const std::string where = fmt::format("--set {}", arg);
  const auto eq = arg.find('=');
  const std::string_view key = trim(arg.substr(0, eq));
  if (eq == std::string_view::npos || key.empty()) {
    return Error{fmt::format(
        "{}: give key=value, e.g. --set k=4, or a sweep: --set k=1,2,4 or --set 'k=[1,2,4]'",
        where)};
  }
  const OptionDecl* option = experiment_option(key == "seeds" ? "seed" : key);
  if (option == nullptr) {
    return Error{fmt::format("{}: unknown key '{}'{}; known keys: {}, seeds", where, key,
                             did_you_mean(key), known_experiment_keys())};
  }
  const std::string_view value = trim(arg.substr(eq + 1));
  // lr=0.01,0.1 is the sweep lr=[0.01,0.1] for a key whose values hold no comma of their own
  // (not a delay spec or other string, not mlp's hidden=256,128).
  const bool comma_list = !bracketed(value) && value.find(',') != std::string_view::npos &&
                          option->type != OptionType::kString &&
                          option->type != OptionType::kIntList;
  Setting s{option, {}, bracketed(value) || comma_list, {kSetLine, static_cast<long>(index)}};
  if (option_key(*option) == "seed") s.order = {kSeedLine, static_cast<long>(index)};
  std::vector<std::string> texts{std::string(value)};
  if (s.list) {
    texts = split_list(comma_list ? value : value.substr(1, value.size() - 2));
    if (option->type == OptionType::kIntList) {
      // hidden=[256,128] is one list; hidden=[[128],[256,128]] sweeps two.
      s.list = !texts.empty() &&
               std::all_of(texts.begin(), texts.end(), [](const auto& t) { return bracketed(t); });
      if (s.list) {
        for (auto& t : texts) t = t.substr(1, t.size() - 2);
      } else {
        texts = {std::string(value.substr(1, value.size() - 2))};
      }
    }
    if (texts.empty()) {
      return Error{fmt::format("{}: an empty list; a sweep needs at least one value", where)};
    }
  }
  for (auto& text : texts) {
    TrainerOptions scratch;
    if (auto c = set_from_text(*option, text, scratch); !c) {
      return Error{fmt::format("{}: {}", where, c.error().message)};
    }
    s.values.push_back({nullptr, std::move(text), where});
  }
  return s;
}

Status apply_setting(const Setting& setting, std::size_t i, TrainerOptions& options) {
  const SettingValue& v = setting.values.at(i);
  Status s = v.node != nullptr ? set_from_toml(*setting.option, *v.node, options)
                               : set_from_text(*setting.option, v.text, options);
  if (!s) return Error{fmt::format("{}: {}", v.where, s.error().message)};
  return {};
}

std::string option_text(const OptionDecl& option, const TrainerOptions& options) {
  const auto v = option.get(options);
  if (!v) return "none";
  if (option.type == OptionType::kDuration) return format_duration(std::get<double>(*v));
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::vector<int>>) {
          return fmt::format("{}", fmt::join(x, ","));
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else {
          return fmt::format("{}", x);
        }
      },
      *v);
}

}  // namespace stalesgd
