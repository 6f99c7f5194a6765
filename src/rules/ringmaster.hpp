// Ringmaster ASGD (Maranjyan, Tyurin & Richtarik, ICML 2025, Algorithm 1; docs/rules.md,
// "Ringmaster"): asynchronous SGD that ignores a gradient whose delay, the updates made since
// the version it was computed on, is R or more; its worker starts again at once on the current
// parameters. Every applied gradient has staleness < R; R = 1 is plain SGD on whichever worker
// is fresh, a large R is async. With --old-point interrupt (Algorithm 2, calculation stops) the
// server stops a computation at the update that makes its delay R, and its worker starts again
// on the new parameters: no gradient R stale is ever pushed.
#pragma once

#include <cstdint>

#include "stalesgd/rules/rule.hpp"

namespace stalesgd {

class Ringmaster final : public Rule {
 public:
  Ringmaster(int workers, std::int64_t threshold, bool stops = false)
      : Rule(workers, 1), threshold_(threshold), stops_(stops) {}
  std::string_view name() const override { return "ringmaster"; }
  bool synchronous() const override { return false; }
  Decision on_gradient(const Arrival& arrival) override;
  bool cuts_at(std::uint64_t computed_on, std::uint64_t version) const override {
    return stops_ && static_cast<std::int64_t>(version - computed_on) >= threshold_;
  }
  std::int64_t threshold() const { return threshold_; }

 private:
  std::int64_t threshold_;  // R >= 1
  bool stops_;              // Algorithm 2: stop a computation as its delay reaches R
};

}  // namespace stalesgd
