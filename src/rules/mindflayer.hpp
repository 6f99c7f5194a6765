// MindFlayer SGD (Maranjyan, Shaikh Omar & Richtarik, UAI 2025; docs/rules.md, "MindFlayer"):
// for random compute times. In each round every worker makes B = --k attempts at the current
// point, each abandoned at the worker's time limit (--time-limit) when it runs longer; a fresh
// one starts on a new draw. The round ends when every live worker has spent its B attempts; the
// update is the mean of the gradients that finished in time (a round where none did is a zero
// step). Nothing is computed at an old point: staleness is always 0.
#pragma once

#include <cstdint>
#include <vector>

#include "stalesgd/rules/rule.hpp"

namespace stalesgd {

class MindFlayer final : public Rule {
 public:
  MindFlayer(int workers, int attempts, std::vector<double> limits);
  std::string_view name() const override { return "mindflayer"; }
  bool synchronous() const override { return true; }
  // Nobody computes when a round ends, so nothing is cut (the workers keep their own timers).
  bool cuts_in_flight() const override { return false; }
  Decision on_gradient(const Arrival& arrival) override;
  Decision on_retire(int worker, int live) override;
  AttemptBudget budget(int worker) const override;
  void save_state(RuleState& out) const override;
  void load_state(RuleState& in) override;
  void clear_round() override;

  // Attempts worker w has spent this round.
  int used(int worker) const { return used_[static_cast<std::size_t>(worker)]; }

 private:
  // B may exceed P: a round holds up to P * B gradients.
  std::int64_t most_pending() const override { return static_cast<std::int64_t>(workers_) * k_; }
  bool complete() const;
  std::vector<double> limits_;  // seconds, per worker
  std::vector<int> used_;
  std::vector<bool> live_;
};

}  // namespace stalesgd
