// A value other than the default for every experiment-file option of the option table, as the
// CLI writes it and as TOML writes it: what tests/config/option_table_test.cpp sets each option
// to, through both, to check that they agree. A rule's own option takes its value from its
// declaration (rule_option.hpp), so that a new rule's option needs no line here unless it is
// free text (mindflayer's --time-limit), which only the rule can parse.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "stalesgd/rules/rule_registry.hpp"

namespace stalesgd::test {

inline const std::map<std::string, std::pair<std::string, std::string>>& samples() {
  static const std::map<std::string, std::pair<std::string, std::string>> s{
      {"dataset", {"fashion-mnist", "\"fashion-mnist\""}},
      {"data-dir", {"/tmp/d", "\"/tmp/d\""}},
      {"model", {"mlp", "\"mlp\""}},
      {"hidden", {"256,128", "[256, 128]"}},
      {"l2", {"0.25", "0.25"}},
      {"rule", {"k-async", "\"k-async\""}},
      {"workers", {"8", "8"}},
      {"workers-per-rank", {"4", "4"}},
      {"k", {"3", "3"}},
      {"local-steps", {"4", "4"}},
      {"local-lr", {"0.125", "0.125"}},
      {"time-limit", {"30ms;w1=90ms", "\"30ms;w1=90ms\""}},
      {"attempts", {"w1=3", "\"w1=3\""}},
      {"partition", {"dirichlet:0.5", "\"dirichlet:0.5\""}},
      {"plugin", {"/tmp/a.so:/tmp/b.so", "\"/tmp/a.so:/tmp/b.so\""}},
      {"batch", {"64", "64"}},
      {"lr", {"0.125", "0.125"}},
      {"lr-rule", {"dutta:c=0.5", "\"dutta:c=0.5\""}},
      {"delay", {"exp:mean=10ms", "\"exp:mean=10ms\""}},
      {"delay-mode", {"add", "\"add\""}},
      {"record-drift", {"true", "true"}},
      {"adasync-every", {"1500ms", "\"1500ms\""}},
      {"seed", {"42", "42"}},
      {"iterations", {"500", "500"}},
      {"time", {"20s", "\"20s\""}},
      {"target-error", {"0.05", "0.05"}},
      {"fail", {"w1:crash@2s", "\"w1:crash@2s\""}},
      {"worker-timeout", {"30s", "\"30s\""}},
      {"stall-timeout", {"90s", "\"90s\""}},
      {"clock", {"virtual", "\"virtual\""}},
      {"server", {"thread", "\"thread\""}},
      {"engine", {"mpi", "\"mpi\""}},
      {"compute-time", {"2ms", "\"2ms\""}},
      {"cores", {"4", "4"}},
      {"server-time", {"20us", "\"20us\""}},
      {"link", {"latency=1ms", "\"latency=1ms\""}},
      {"shards", {"4", "4"}},
      {"machine", {"/tmp/m.json", "\"/tmp/m.json\""}},
      {"eval-every", {"250ms", "\"250ms\""}},
      {"eval-samples", {"1000", "1000"}},
      {"eval-sizing", {"full", "\"full\""}},
      {"holdout", {"5000", "5000"}},
  };
  return s;
}

// The sample of option `name`: samples()'s, or for a rule's own option one its declaration
// allows (an integer at 1 or its least, the first of its words, 0.5, 20ms); nullopt when
// there is none.
inline std::optional<std::pair<std::string, std::string>> sample_of(const std::string& name) {
  if (const auto it = samples().find(name); it != samples().end()) return it->second;
  const auto rules = rules_with_option(name);
  if (rules.empty()) return std::nullopt;
  for (const RuleOption& o : rules.front()->options) {
    if (o.name != name) continue;
    switch (o.type) {
      case RuleOptionType::kInteger: {
        const std::string v = std::to_string(std::max<std::int64_t>(o.min, 1));
        return std::pair{v, v};
      }
      case RuleOptionType::kChoice:
        return std::pair{o.choices.front(), "\"" + o.choices.front() + "\""};
      case RuleOptionType::kNumber:
        return std::pair{std::string("0.5"), std::string("0.5")};
      case RuleOptionType::kDuration:
        return std::pair{std::string("20ms"), std::string("\"20ms\"")};
      case RuleOptionType::kString:
        return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace stalesgd::test
