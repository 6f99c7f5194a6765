// The rule registry (rule_registry.hpp): the built-in rules of builtin_rules.hpp and a program's
// own, and the resolution of --rule, --k and P every rule shares.
#include "stalesgd/rules/rule_registry.hpp"

#include <algorithm>
#include <deque>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

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
      return RuleConfig{info.name, workers, workers};
    case KChoice::kOne:
      if (k != 0 && k != 1) {
        return Error{fmt::format(
            "{} applies every gradient (K = 1), so --k {} does not apply; use --rule k-async "
            "--k {} or drop --k",
            info.name, k, k)};
      }
      return RuleConfig{info.name, workers, 1};
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
  return RuleConfig{info.name, workers, k};
}

}  // namespace

Status register_rule(RuleInfo info) {
  if (info.name.empty() || info.name.find_first_of(": \t\n,|") != std::string::npos) {
    return Error{fmt::format(
        "register_rule: '{}' is not a rule name (non-empty, without ':', ',', '|' or spaces)",
        info.name)};
  }
  if (!info.make) return Error{fmt::format("register_rule: '{}' has no make", info.name)};
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (const auto& known : r.rules) {
    if (known.name == info.name) {
      return Error{fmt::format("register_rule: '{}' is registered already", info.name)};
    }
  }
  r.rules.push_back(std::move(info));
  return {};
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

std::string_view RuleConfig::name() const {
  return backup ? std::string_view("backup") : rule;
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
  // The baselines' own flags belong to them alone.
  if (spec.staleness_bound != -1 && spec.name != "ssp") {
    return Error{fmt::format("--staleness-bound applies to --rule ssp only, not {}", spec.name)};
  }
  if (spec.backups != -1 && spec.name != "backup") {
    return Error{fmt::format("--backups applies to --rule backup only, not {}", spec.name)};
  }
  if (spec.staleness_threshold != -1 && spec.name != "ringmaster") {
    return Error{
        fmt::format("--staleness-threshold applies to --rule ringmaster only, not {}", spec.name)};
  }
  if (!spec.old_point.empty() && spec.name != "rennala" && spec.name != "ringmaster") {
    return Error{fmt::format("--old-point applies to --rule rennala and ringmaster only, not {}",
                             spec.name)};
  }
  if (!spec.time_limit.empty() && spec.name != "mindflayer") {
    return Error{fmt::format("--time-limit applies to --rule mindflayer only, not {}", spec.name)};
  }
  return info->resolve ? info->resolve(spec, workers) : resolve_k(*info, spec, workers);
}

std::unique_ptr<Rule> make_rule(const RuleConfig& config) {
  const RuleInfo* info = find_rule(config.rule);
  // A RuleConfig comes from resolve_rule, which knows every registered name.
  if (info == nullptr)
    throw std::logic_error("make_rule: no rule '" + config.rule + "' is registered");
  return info->make(config);
}

}  // namespace stalesgd
