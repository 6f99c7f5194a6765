// k-batch-sync: all workers start on w_j; the first K minibatch gradients, from any workers (a
// fast worker may give several, each on w_j), make the update; work in flight is cancelled and
// every worker restarts on w_{j+1}. Staleness is always 0. Dutta et al. 2018, §3 (K-batch-sync).
#pragma once

#include "stalesgd/rules/rule.hpp"

namespace stalesgd {

class KBatchSync final : public Rule {
 public:
  KBatchSync(int workers, int k) : Rule(workers, k) {}
  std::string_view name() const override { return "k-batch-sync"; }
  bool synchronous() const override { return true; }
  Decision on_gradient(const Arrival& arrival) override;
};

}  // namespace stalesgd
