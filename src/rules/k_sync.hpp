// k-sync (and sync = k-sync with K = P): all workers start on w_j; the first K gradients (from K
// distinct workers) make the update; the other P - K are cancelled; every worker restarts on
// w_{j+1}. Staleness is always 0. Dutta et al. 2018, §3 (K-sync SGD).
#pragma once

#include <string>
#include <vector>

#include "stalesgd/rules/rule.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {

class KSync final : public Rule {
 public:
  // `k_is_live`: K follows the live workers when some fail (sync); otherwise K is fixed and
  // needs K live workers (k-sync).
  KSync(int workers, int k, std::string name = "k-sync", bool k_is_live = false);
  std::string_view name() const override { return name_; }
  bool synchronous() const override { return true; }
  Decision on_gradient(const Arrival& arrival) override;
  void save_state(RuleState& out) const override;
  void load_state(RuleState& in) override;
  void clear_round() override;
  bool runs_with(int live) const override { return live >= 1 && (k_is_live_ || k_ <= live); }
  Decision on_retire(int worker, int live) override;

 private:
  std::string name_;
  bool k_is_live_;
  int live_;                 // k_is_live_: workers not failed, the K of the rounds to come
  int failed_in_round_ = 0;  // k_is_live_: failed workers whose gradient is in this round
  std::vector<bool> seen_;   // workers already counted in this round
};

}  // namespace stalesgd
