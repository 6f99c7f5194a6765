// k-async (and async = K = 1): the update is made from the first K gradients of K distinct
// workers, stale ones included; a worker that pushed waits for the update and then pulls
// w_{j+1}; the others keep computing on their old parameters and push later, stale.
// Dutta et al. 2018, §3 (K-async SGD).
#pragma once

#include <string>
#include <vector>

#include "stalesgd/rules/rule.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {

class KAsync final : public Rule {
 public:
  KAsync(int workers, int k, std::string name = "k-async");
  std::string_view name() const override { return name_; }
  bool synchronous() const override { return false; }
  Decision on_gradient(const Arrival& arrival) override;
  void save_state(RuleState& out) const override;
  void load_state(RuleState& in) override;
  void clear_round() override;
  bool runs_with(int live) const override { return live >= 1 && k_ <= live; }

 private:
  std::string name_;
  std::vector<bool> seen_;  // workers already counted in this round
};

}  // namespace stalesgd
