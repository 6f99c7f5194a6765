// The rule registry (rule_registry.hpp): the built-in rules of builtin_rules.hpp and a program's
// own, and the resolution of --rule, --k and P every rule shares.
#include "stalesgd/rules/rule_registry.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <deque>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "rules/builtin_rules.hpp"

namespace stalesgd {

#define STALESGD_DECLARE_RULE(f) RuleInfo f();
STALESGD_BUILTIN_RULES(STALESGD_DECLARE_RULE)
#undef STALESGD_DECLARE_RULE

namespace {

// Registered before training starts and read whenever a run resolves or builds its rule,
// possibly from several threads (race --jobs): a mutex around the list. A deque, so that the
// pointers find_rule hands out stay valid as rules are added.
struct Registry {
  std::mutex mutex;
  std::deque<RuleInfo> rules;  // GUARDED_BY(mutex)
  // Read without the lock by train's option table to see whether to look again; relaxed is
  // enough, since a reader that sees the new count then takes the lock to read the rules.
  std::atomic<std::uint64_t> generation{0};
};

Registry& registry() {
  static Registry* r = [] {
    auto* reg = new Registry;  // never destroyed: rules may be looked up during exit
#define STALESGD_ADD_RULE(f) reg->rules.push_back(f());
    STALESGD_BUILTIN_RULES(STALESGD_ADD_RULE)
#undef STALESGD_ADD_RULE
    return reg;
  }();
  return *r;
}

// K from --k by the rule's KChoice; the messages name the rule that takes the K asked for.
Result<RuleConfig> resolve_k(const RuleInfo& info, const RuleSpec& spec, int workers) {
  const int k = spec.k;
  switch (info.k) {
    case KChoice::kAllWorkers:
      if (k != 0 && k != workers) {
        return Error{fmt::format(
            "{} always waits for all P = {} workers, so --k {} does not apply; use --rule "
            "k-sync --k {} or drop --k",
            info.name, workers, k, k)};
      }
      return RuleConfig{info.name, workers, workers, {}};
    case KChoice::kOne:
      if (k != 0 && k != 1) {
        return Error{fmt::format(
            "{} applies every gradient (K = 1), so --k {} does not apply; use --rule k-async "
            "--k {} or drop --k",
            info.name, k, k)};
      }
      return RuleConfig{info.name, workers, 1, {}};
    case KChoice::kGiven:
      break;
  }
  if (k == 0) {
    return Error{fmt::format("--rule {} needs --k K with 1 <= K <= P = {}", info.name, workers)};
  }
  if (k < 1 || k > workers) {
    return Error{fmt::format("--k {} is out of range for --workers {}: K must satisfy 1 <= K <= P",
                             k, workers)};
  }
  return RuleConfig{info.name, workers, k, {}};
}

const char* type_name(RuleOptionType t) {
  switch (t) {
    case RuleOptionType::kInteger:
      return "integer";
    case RuleOptionType::kNumber:
      return "number";
    case RuleOptionType::kDuration:
      return "duration";
    case RuleOptionType::kString:
      return "string";
    case RuleOptionType::kChoice:
      return "choice";
  }
  return "?";
}

// An option's declaration on its own: a flag's spelling, bounds that hold a value, words.
Status check_option(const RuleInfo& info, const RuleOption& o) {
  const bool spelt = !o.name.empty() && std::islower(static_cast<unsigned char>(o.name[0])) &&
                     std::all_of(o.name.begin(), o.name.end(), [](char c) {
                       return std::islower(static_cast<unsigned char>(c)) ||
                              std::isdigit(static_cast<unsigned char>(c)) || c == '-';
                     });
  if (!spelt) {
    return Error{fmt::format(
        "register_rule: '{}' declares an option '{}'; a name is lower-case letters, digits and "
        "'-', starting with a letter",
        info.name, o.name)};
  }
  if (o.help.empty()) {
    return Error{
        fmt::format("register_rule: '{}' declares --{} without a help line", info.name, o.name)};
  }
  if (o.type == RuleOptionType::kInteger && o.min > o.max) {
    return Error{fmt::format("register_rule: '{}' declares --{} with min {} above max {}",
                             info.name, o.name, o.min, o.max)};
  }
  if (o.type == RuleOptionType::kChoice && o.choices.empty()) {
    return Error{fmt::format("register_rule: '{}' declares --{} as a choice without words",
                             info.name, o.name)};
  }
  return {};
}

bool same_declaration(const RuleOption& a, const RuleOption& b) {
  return a.type == b.type && a.min == b.min && a.max == b.max && a.choices == b.choices;
}

// A given value of the rule's option `o`, checked as the option table checks the CLI's.
Status check_value(const RuleOption& o, const RuleValue& v) {
  const auto must_be = [&](const std::string& what) {
    return Error{fmt::format("--{} must be {}", o.name, o.expects.empty() ? what : o.expects)};
  };
  switch (o.type) {
    case RuleOptionType::kInteger: {
      const auto* i = std::get_if<std::int64_t>(&v);
      if (i == nullptr || *i < o.min || *i > o.max) {
        return must_be(fmt::format("an integer from {} to {}", o.min, o.max));
      }
      return {};
    }
    case RuleOptionType::kNumber:
    case RuleOptionType::kDuration: {
      const auto* d = std::get_if<double>(&v);
      if (d == nullptr || !std::isfinite(*d) || (o.type == RuleOptionType::kDuration && *d < 0)) {
        return must_be(o.type == RuleOptionType::kNumber ? "a finite number" : "a duration");
      }
      return {};
    }
    case RuleOptionType::kString:
      if (!std::holds_alternative<std::string>(v)) return must_be("a string");
      return {};
    case RuleOptionType::kChoice: {
      const auto* w = std::get_if<std::string>(&v);
      if (w == nullptr || std::find(o.choices.begin(), o.choices.end(), *w) == o.choices.end()) {
        return must_be(fmt::format("one of {}", fmt::join(o.choices, ", ")));
      }
      return {};
    }
  }
  return {};
}

// "--rule ssp", "--rule rennala and ringmaster": the rules that take an option.
std::string rule_list(const std::vector<const RuleInfo*>& rules) {
  std::string out;
  for (std::size_t i = 0; i < rules.size(); ++i) {
    if (i > 0) out += i + 1 == rules.size() ? " and " : ", ";
    out += rules[i]->name;
  }
  return out;
}

}  // namespace

Status register_rule(RuleInfo info) {
  if (info.name.empty() || info.name.find_first_of(": \t\n,|") != std::string::npos) {
    return Error{fmt::format(
        "register_rule: '{}' is not a rule name (non-empty, without ':', ',', '|' or spaces)",
        info.name)};
  }
  if (!info.make) return Error{fmt::format("register_rule: '{}' has no make", info.name)};
  for (std::size_t i = 0; i < info.options.size(); ++i) {
    if (auto s = check_option(info, info.options[i]); !s) return s;
    for (std::size_t j = 0; j < i; ++j) {
      if (info.options[j].name == info.options[i].name) {
        return Error{fmt::format("register_rule: '{}' declares --{} twice", info.name,
                                 info.options[i].name)};
      }
    }
  }
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (const auto& known : r.rules) {
    if (known.name == info.name) {
      return Error{fmt::format("register_rule: '{}' is registered already", info.name)};
    }
    for (const RuleOption& mine : info.options) {
      for (const RuleOption& theirs : known.options) {
        if (mine.name == theirs.name && !same_declaration(mine, theirs)) {
          return Error{fmt::format(
              "register_rule: '{}' declares --{} as a {}, which rule '{}' declares as a {} of "
              "other bounds or words; declare it alike, or give it another name",
              info.name, mine.name, type_name(mine.type), known.name, type_name(theirs.type))};
        }
      }
    }
  }
  r.rules.push_back(std::move(info));
  r.generation.fetch_add(1, std::memory_order_relaxed);
  return {};
}

std::string rules_that(const std::function<bool(const RuleInfo&)>& has) {
  std::vector<const RuleInfo*> rules;
  for (const RuleInfo* info : registered_rules()) {
    if (info->alias_of.empty() && has(*info)) rules.push_back(info);
  }
  return rule_list(rules);
}

std::uint64_t rules_generation() {
  Registry& r = registry();
  return r.generation.load(std::memory_order_relaxed);
}

std::vector<const RuleInfo*> rules_with_option(std::string_view name) {
  std::vector<const RuleInfo*> out;
  for (const RuleInfo* info : registered_rules()) {
    for (const RuleOption& o : info->options) {
      if (o.name == name) out.push_back(info);
    }
  }
  return out;
}

const RuleInfo* find_rule(std::string_view name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (const auto& info : r.rules) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

std::vector<const RuleInfo*> registered_rules() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<const RuleInfo*> out;
  for (const auto& info : r.rules) out.push_back(&info);
  return out;
}

std::vector<std::string> rule_names() {
  std::vector<std::string> names;
  for (const RuleInfo* info : registered_rules()) names.push_back(info->name);
  return names;
}

std::string rule_choices(bool with_own_flags) {
  std::vector<std::string> names;
  for (const RuleInfo* info : registered_rules()) {
    if (with_own_flags || !info->resolve) names.push_back(info->name);
  }
  return fmt::format("{}", fmt::join(names, " | "));
}

std::vector<RuleSpec> every_rule_specs(int workers) {
  std::vector<RuleSpec> specs;
  for (const RuleInfo* info : registered_rules()) {
    if (info->resolve || !info->alias_of.empty()) continue;  // own flags, or a repeat
    if (info->k != KChoice::kGiven) {
      specs.push_back({info->name, 0});
      continue;
    }
    for (int k = 1; k <= workers; k = k * 2 > workers && k != workers ? workers : k * 2) {
      specs.push_back({info->name, k});
    }
  }
  return specs;
}

Result<RuleConfig> rule_at_workers(const RuleConfig& rule, int workers) {
  const RuleInfo* info = find_rule(rule.name());
  if (info == nullptr) return Error{fmt::format("unknown rule '{}'", rule.name())};
  if (info->at_workers) return info->at_workers(rule, workers);
  RuleConfig c = rule;
  c.workers = workers;
  c.k = info->k == KChoice::kAllWorkers ? workers
        : info->k == KChoice::kOne      ? 1
                                        : std::min(rule.k, workers);
  return c;
}

bool RuleConfig::synchronous() const {
  const RuleInfo* info = find_rule(rule);
  return info != nullptr && info->synchronous;
}

Result<RuleConfig> resolve_rule(const RuleSpec& spec, int workers) {
  const RuleInfo* info = find_rule(spec.name);
  if (info == nullptr) {
    return Error{
        fmt::format("unknown rule '{}'; use one of: {}", spec.name, fmt::join(rule_names(), ", "))};
  }
  if (workers < 1) {
    return Error{fmt::format("--workers {} must be at least 1", workers)};
  }
  // A rule's own options belong to it alone, each of its type and range.
  for (const auto& entry : spec.params.values()) {
    // Not a structured binding: clang 14 cannot capture one in a lambda.
    const std::string& name = entry.first;
    const auto& value = entry.second;
    const auto mine = std::find_if(info->options.begin(), info->options.end(),
                                   [&](const RuleOption& o) { return o.name == name; });
    if (mine == info->options.end()) {
      const auto takers = rules_with_option(name);
      if (takers.empty()) return Error{fmt::format("--{} is no rule's option", name)};
      return Error{fmt::format("--{} applies to --rule {} only, not {}", name, rule_list(takers),
                               spec.name)};
    }
    if (auto s = check_value(*mine, value); !s) return s.error();
  }
  auto config = info->resolve ? info->resolve(spec, workers) : resolve_k(*info, spec, workers);
  if (config) config->params = spec.params;
  return config;
}

std::unique_ptr<Rule> make_rule(const RuleConfig& config) {
  const RuleInfo* info = find_rule(config.rule);
  // A RuleConfig comes from resolve_rule, which knows every registered name.
  if (info == nullptr)
    throw std::logic_error("make_rule: no rule '" + config.rule + "' is registered");
  return info->make(config);
}

}  // namespace stalesgd
