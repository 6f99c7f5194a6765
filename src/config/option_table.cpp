// The option table of `stalesgd train`: train's own options (train_option_decls.cpp), then the
// registered rules' own, appended as rules register. The parsers that apply CLI text and TOML
// values through it are in option_values.cpp.
#include "config/option_table.hpp"

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <type_traits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/option_fields.hpp"
#include "config/train_option_decls.hpp"
#include "stalesgd/rules/rule_registry.hpp"
#include "stalesgd/straggler/duration.hpp"

namespace stalesgd {
namespace {

constexpr std::string_view kRuleGroup = "The rules' own (docs/rules.md)";

OptionType table_type(RuleOptionType t) {
  switch (t) {
    case RuleOptionType::kInteger:
      return OptionType::kInteger;
    case RuleOptionType::kNumber:
      return OptionType::kNumber;
    case RuleOptionType::kDuration:
      return OptionType::kDuration;
    case RuleOptionType::kString:
      return OptionType::kString;
    case RuleOptionType::kChoice:
      return OptionType::kChoice;
  }
  return OptionType::kString;
}

// A table entry for a rule's option: its value in TrainerOptions::rule.params, absent (and out
// of summary.json) until given. Its strings are the registry's, which lives as long as the
// process; the help names the rules that take it.
OptionDecl rule_option_decl(const RuleOption& o, const std::string& help) {
  OptionDecl d;
  d.name = o.name;
  d.type = table_type(o.type);
  d.help = help;
  d.group = kRuleGroup;
  d.min = o.min;
  d.max = o.max;
  for (const std::string& c : o.choices) d.choices.push_back(c);
  d.expects = o.expects;
  d.rule_option = true;
  const std::string name = o.name;
  d.set = [name](TrainerOptions& opts, const OptionValue& v) {
    std::visit(
        [&](const auto& x) {
          using X = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<X, std::int64_t> || std::is_same_v<X, double> ||
                        std::is_same_v<X, std::string>) {
            opts.rule.params.set(name, x);
          }
        },
        v);
  };
  d.get = [name](const TrainerOptions& opts) -> std::optional<OptionValue> {
    const auto v = opts.rule.params.get(name);
    if (!v) return std::nullopt;
    return std::visit([](const auto& x) { return OptionValue{x}; }, *v);
  };
  return d;
}

// Train's own options, then the rules'.
struct Table {
  std::mutex mutex;
  std::deque<OptionDecl> options = train_option_decls();  // GUARDED_BY(mutex) while it grows
  std::size_t own = options.size();                       // train's own, before the rules'
  std::uint64_t generation = ~std::uint64_t{0};           // GUARDED_BY(mutex): the registry's, seen
  std::deque<std::string> helps;  // GUARDED_BY(mutex): the rules' help lines
};

Table& table() {
  static Table* t = new Table;  // never destroyed: options may be read during exit
  return *t;
}

// An option name train's own table holds, which a rule's may not take.
bool is_own_option(const Table& t, std::string_view name) {
  for (std::size_t i = 0; i < t.own; ++i) {
    if (t.options[i].name == name) return true;
  }
  return false;
}

}  // namespace

const std::deque<OptionDecl>& train_options() {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  if (rules_generation() == t.generation) return t.options;
  t.generation = rules_generation();
  for (const RuleInfo* info : registered_rules()) {
    for (const RuleOption& o : info->options) {
      if (is_own_option(t, o.name)) continue;  // check_rule_options says so
      const auto takers = rules_with_option(o.name);
      std::string names;
      for (std::size_t i = 0; i < takers.size(); ++i)
        names += (i > 0 ? ", " : "") + takers[i]->name;
      const std::string help = names + ": " + o.help;
      const auto it =
          std::find_if(t.options.begin() + static_cast<std::ptrdiff_t>(t.own), t.options.end(),
                       [&](const OptionDecl& d) { return d.name == o.name; });
      if (it != t.options.end()) {
        // Declared before by another rule: the help names every rule that takes it now.
        if (it->help != help) {
          t.helps.push_back(help);
          it->help = t.helps.back();
        }
        continue;
      }
      t.helps.push_back(help);
      t.options.push_back(rule_option_decl(o, t.helps.back()));
    }
  }
  return t.options;
}

Status check_rule_options() {
  Table& t = table();
  for (const RuleInfo* info : registered_rules()) {
    for (const RuleOption& o : info->options) {
      if (is_own_option(t, o.name)) {
        return Error{fmt::format(
            "rule '{}' declares --{}, which is stalesgd train's own option; give its option "
            "another name",
            info->name, o.name)};
      }
    }
  }
  return {};
}

const OptionDecl* find_option(std::string_view name) {
  for (const auto& d : train_options()) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

}  // namespace stalesgd
