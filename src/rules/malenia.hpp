// Malenia SGD (Tyurin & Richtarik, NeurIPS 2023, Method 5; docs/rules.md, "Malenia"): for
// workers that hold different data (--partition). The server collects gradients computed at the
// current point, B_i of them from worker i, until every live worker has given at least one and
// the harmonic mean of the B_i reaches S/n, i.e. sum_i 1/B_i <= n^2 / S; the update averages each
// worker's gradients, then the workers' means (the server's WorkerMeans). A gradient computed at
// an older point is discarded and its worker starts again on the current one; as in Rennala the
// workers are not interrupted. Staleness is always 0.
#pragma once

#include <vector>

#include "stalesgd/rules/rule.hpp"

namespace stalesgd {

class Malenia final : public Rule {
 public:
  Malenia(int workers, int s);
  std::string_view name() const override { return "malenia"; }
  bool synchronous() const override { return true; }
  bool averages_per_worker() const override { return true; }
  bool cuts_in_flight() const override { return false; }
  Decision on_gradient(const Arrival& arrival) override;
  Decision on_retire(int worker, int live) override;
  void save_state(RuleState& out) const override;
  void load_state(RuleState& in) override;
  void clear_round() override;

  int count(int worker) const { return counts_[static_cast<std::size_t>(worker)]; }

 private:
  // A fast worker may give any number while a slow one computes its first.
  std::int64_t most_pending() const override { return std::int64_t{1} << 30; }
  bool complete() const;
  std::vector<int> counts_;  // B_i this round
  std::vector<bool> live_;
};

}  // namespace stalesgd
