// MindFlayer SGD (Maranjyan, Shaikh Omar & Richtarik, UAI 2025; docs/rules.md, "MindFlayer"):
// for random compute times. In each round every worker i makes B_i attempts at the current
// point (B = --k for every worker, --attempts 'w3=4' another B for some), each abandoned at the
// worker's time limit (--time-limit) when it runs longer; a fresh one starts on a new draw.
// The round ends when every live worker has spent its B_i attempts; the update is the mean of
// the gradients that finished in time (a round where none did is a zero step). Nothing is
// computed at an old point: staleness is always 0.
//
// Two forms of the update: as published (`mindflayer`), the sum of the kept gradients divided
// by their expected count, sum_i P(X_i <= t_i) B_i over the live workers, which makes it an
// unbiased estimate of the gradient and needs each worker's delay distribution; and the
// project's variant (`mindflayer-kept`), divided by the count kept, as Rennala's mean is, for a
// server that does not know the distributions.
#pragma once

#include <cstdint>
#include <vector>

#include "stalesgd/rules/rule.hpp"

namespace stalesgd {

class MindFlayer final : public Rule {
 public:
  // `published`: divide by the expected count of kept gradients (use_delays gives it), else by
  // the count kept.
  // `attempts`: each worker's B_i; `limits`: each worker's t_i in seconds.
  MindFlayer(std::vector<int> attempts, std::vector<double> limits, bool published);
  std::string_view name() const override { return published_ ? "mindflayer" : "mindflayer-kept"; }
  bool synchronous() const override { return true; }
  // Nobody computes when a round ends, so nothing is cut (the workers keep their own timers).
  bool cuts_in_flight() const override { return false; }
  Decision on_gradient(const Arrival& arrival) override;
  Decision on_retire(int worker, int live) override;
  AttemptBudget budget(int worker) const override;
  void save_state(RuleState& out) const override;
  void load_state(RuleState& in) override;
  void clear_round() override;
  double update_divisor(int kept) const override;
  void use_delays(const StragglerProfile& delays) override;

  // Attempts worker w has spent this round.
  int used(int worker) const { return used_[static_cast<std::size_t>(worker)]; }

 private:
  // B may exceed P: a round holds up to sum_i B_i gradients.
  std::int64_t most_pending() const override;
  bool complete() const;
  std::vector<int> attempts_;   // B_i, per worker
  std::vector<double> limits_;  // seconds, per worker
  std::vector<int> used_;
  std::vector<bool> live_;
  bool published_;
  std::vector<double> chance_;  // P(X_i <= t_i) per worker (published only)
};

}  // namespace stalesgd
