// The built-in rules, one line each, in the order docs/rules.md and the help text list them.
// RULE(f) names `RuleInfo f()`, which the rule's own file defines; the registry (registry.cpp)
// declares and registers each. Adding a rule: its file, and its line here.
#pragma once

#define STALESGD_BUILTIN_RULES(RULE) \
  RULE(sync_rule)                    \
  RULE(k_sync_rule)                  \
  RULE(k_batch_sync_rule)            \
  RULE(async_rule)                   \
  RULE(k_async_rule)                 \
  RULE(k_batch_async_rule)           \
  RULE(k_quota_async_rule)           \
  RULE(ssp_rule)                     \
  RULE(backup_rule)                  \
  RULE(m_sync_rule)                  \
  RULE(fedbuff_rule)                 \
  RULE(rennala_rule)                 \
  RULE(malenia_rule)                 \
  RULE(ringmaster_rule)              \
  RULE(mindflayer_rule)              \
  RULE(mindflayer_kept_rule)
