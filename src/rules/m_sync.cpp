// m-sync: m-Synchronous SGD (Begunov & Tyurin, 2026), the first m of n fresh gradients each
// round, the rest cancelled. It is the paper's K-sync under another name (m = K, n = P), so
// the same state machine and theory, registered under the name its readers know
// (docs/rules.md, "The field since 2018").
#include "rules/k_sync.hpp"
#include "stalesgd/rules/rule_registry.hpp"

namespace stalesgd {

RuleInfo k_sync_rule();

RuleInfo m_sync_rule() {
  RuleInfo info = k_sync_rule();
  info.name = "m-sync";
  info.alias_of = "k-sync";
  info.summary = "m-Synchronous SGD: k-sync by its 2026 name, the first m = --k of P gradients";
  info.make = [](const RuleConfig& c) -> std::unique_ptr<Rule> {
    return std::make_unique<KSync>(c.workers, c.k, "m-sync");
  };
  info.takes_adasync = false;  // AdaSync is the paper's, for k-sync and k-async by name
  return info;
}

}  // namespace stalesgd
