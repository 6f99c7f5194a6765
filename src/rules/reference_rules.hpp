// The paper's rules by the role they play where other code compares against them: theory's
// E[T_sync] / E[T_async] (Dutta et al. 2018, Section 4), calibration's measurements, theory
// --error's default (the K-sync of Theorem 1), --rule's default. Their names live here, with
// the rules, so that nothing outside src/rules/ spells a rule's name.
#pragma once

#include "stalesgd/rules/rule.hpp"

namespace stalesgd {

// sync: every update waits for all P workers (K = P); --rule's default.
inline RuleSpec all_workers_rule() {
  return {"sync", 0, {}};
}
// async: every gradient is an update as it arrives (K = 1).
inline RuleSpec each_gradient_rule() {
  return {"async", 1, {}};
}
// K-sync: the first K of P fresh gradients make the update (Theorem 1's rule).
inline RuleSpec first_k_rule(int k) {
  return {"k-sync", k, {}};
}
// K-async: the first K gradients of K distinct workers, stale ones included.
inline RuleSpec first_k_async_rule(int k) {
  return {"k-async", k, {}};
}

}  // namespace stalesgd
