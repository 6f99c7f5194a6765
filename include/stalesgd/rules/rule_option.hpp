// A rule's own options (ssp's --staleness-bound, a plug-in's --cap): declared in the rule's
// registration (rule_registry.hpp, RuleInfo::options), they join `stalesgd train`'s one option
// table, so that --help, docs/cli.md, experiment files, --set, summary.json's "config",
// run.toml, checkpoints and race --resume see them as they see --batch, with no other file
// touched (docs/architecture.md, "Adding a rule"). A run's values reach the rule as RuleParams.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace stalesgd {

enum class RuleOptionType {
  kInteger,   // an integer in [min, max]
  kNumber,    // a finite number
  kDuration,  // "20ms", "2s": seconds in RuleParams, JSON and TOML as written ("20ms")
  kString,    // any text (the rule parses it: mindflayer's "30ms;w3=90ms")
  kChoice,    // one of `choices`
};

struct RuleOption {
  std::string name{};  // the flag without "--" (lower case, digits and '-'); the TOML and JSON
                       // key is the name with '-' as '_'
  RuleOptionType type = RuleOptionType::kInteger;
  std::string help{};    // one line for --help and docs/cli.md, without the rule's name
  std::int64_t min = 0;  // kInteger: the bounds, inclusive
  std::int64_t max = 0;
  std::vector<std::string> choices{};  // kChoice: the words
  std::string expects{};  // what a valid value is, for errors ("an integer R >= 1"); empty: from
                          // the type and bounds
};

// A value of a rule option: kInteger std::int64_t, kNumber and kDuration double (seconds),
// kString and kChoice std::string.
using RuleValue = std::variant<std::int64_t, double, std::string>;

// The rule options a run was given, by name; an option not given is absent (the rule decides
// what that means: a default, or a refusal naming the flag).
class RuleParams {
 public:
  bool has(std::string_view name) const { return values_.find(name) != values_.end(); }
  std::optional<RuleValue> get(std::string_view name) const {
    const auto it = values_.find(name);
    if (it == values_.end()) return std::nullopt;
    return it->second;
  }
  // The value, or `otherwise` when the option was not given. The type must be the option's.
  std::int64_t integer(std::string_view name, std::int64_t otherwise) const {
    const auto v = get(name);
    return v ? std::get<std::int64_t>(*v) : otherwise;
  }
  double number(std::string_view name, double otherwise) const {
    const auto v = get(name);
    return v ? std::get<double>(*v) : otherwise;
  }
  std::string text(std::string_view name, std::string otherwise = {}) const {
    const auto v = get(name);
    return v ? std::get<std::string>(*v) : otherwise;
  }
  void set(std::string name, RuleValue value) { values_[std::move(name)] = std::move(value); }
  void erase(std::string_view name) {
    if (const auto it = values_.find(name); it != values_.end()) values_.erase(it);
  }
  const std::map<std::string, RuleValue, std::less<>>& values() const { return values_; }
  bool operator==(const RuleParams&) const = default;

 private:
  std::map<std::string, RuleValue, std::less<>> values_;
};

}  // namespace stalesgd
