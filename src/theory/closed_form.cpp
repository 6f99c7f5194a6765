// closed_form_runtime: the closed form of E[T] the rule registered, if any, for i.i.d. delays
// or fixed per-worker times (each rule's file holds its own, with the theorem it comes from;
// docs/theory.md).
#include "stalesgd/rules/rule_registry.hpp"
#include "stalesgd/theory/runtime.hpp"

namespace stalesgd {

std::optional<ClosedForm> closed_form_runtime(const RuleConfig& rule, const Distribution& x) {
  const RuleInfo* info = find_rule(rule.rule);
  if (info == nullptr || !info->closed_form) return std::nullopt;
  return info->closed_form(rule, x);
}

std::optional<ClosedForm> closed_form_runtime(const RuleConfig& rule,
                                              const StragglerProfile& profile) {
  if (const Distribution* x = profile.iid(); x != nullptr) return closed_form_runtime(rule, *x);
  const RuleInfo* info = find_rule(rule.rule);
  const auto times = profile.fixed_times();
  if (info == nullptr || !info->fixed_form || !times) return std::nullopt;
  return info->fixed_form(rule, *times);
}

}  // namespace stalesgd
