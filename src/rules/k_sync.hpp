// k-sync (and sync = k-sync with K = P): all workers start on w_j; the first K gradients (from K
// distinct workers) make the update; the other P - K are cancelled; every worker restarts on
// w_{j+1}. Staleness is always 0. Dutta et al. 2018, §3 (K-sync SGD).
#pragma once

#include <string>
#include <vector>

#include "stalesgd/rules/rule.hpp"

namespace stalesgd {

class KSync final : public Rule {
 public:
  KSync(int workers, int k, std::string name = "k-sync");
  std::string_view name() const override { return name_; }
  bool synchronous() const override { return true; }
  Decision on_gradient(const Arrival& arrival) override;
  void save(StateWriter& out) const override;
  void load(StateReader& in) override;
  void clear_round() override;

 private:
  std::string name_;
  std::vector<bool> seen_;  // workers already counted in this round
};

}  // namespace stalesgd
