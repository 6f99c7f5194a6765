// Ringmaster ASGD (Maranjyan, Tyurin & Richtarik, ICML 2025, Algorithm 1; docs/rules.md,
// "Ringmaster"): asynchronous SGD that ignores a gradient whose delay, the updates made since
// the version it was computed on, is R or more; its worker starts again at once on the current
// parameters. Every applied gradient has staleness < R; R = 1 is plain SGD on whichever worker
// is fresh, a large R is async.
#pragma once

#include <cstdint>

#include "stalesgd/rules/rule.hpp"

namespace stalesgd {

class Ringmaster final : public Rule {
 public:
  Ringmaster(int workers, std::int64_t threshold) : Rule(workers, 1), threshold_(threshold) {}
  std::string_view name() const override { return "ringmaster"; }
  bool synchronous() const override { return false; }
  Decision on_gradient(const Arrival& arrival) override;
  std::int64_t threshold() const { return threshold_; }

 private:
  std::int64_t threshold_;  // R >= 1
};

}  // namespace stalesgd
