// k-batch-async: the update is made from any K gradients, stale ones included and several from
// one worker allowed; a worker that pushed pulls the current parameters at once and goes on.
// Dutta et al. 2018, §3 (K-batch-async SGD). Its runtime per iteration is K E[X] / P for any
// delay distribution (renewal argument, Theorem 5).
#pragma once

#include "stalesgd/rules/rule.hpp"

namespace stalesgd {

class KBatchAsync final : public Rule {
 public:
  KBatchAsync(int workers, int k) : Rule(workers, k) {}
  std::string_view name() const override { return "k-batch-async"; }
  bool synchronous() const override { return false; }
  Decision on_gradient(const Arrival& arrival) override;
};

}  // namespace stalesgd
