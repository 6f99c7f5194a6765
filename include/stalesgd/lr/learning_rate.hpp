// LearningRate: the step size the server gives each accepted gradient. The update is
// w_{j+1} = w_j - (1/K) * sum_i lr_i * g_i, so a rule may depend on the iteration j (decay)
// or on the gradient's staleness (Zhang et al. 2016; Dutta et al. 2018, §5).
//
// Thread safety: immutable once built; the server (under its lock) calls rate().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "stalesgd/util/result.hpp"

namespace stalesgd {

// What the server knows about a gradient when it accepts it.
struct LrContext {
  std::uint64_t iteration = 0;  // server version j the update will produce j + 1 from
  std::uint64_t staleness = 0;  // j - version the gradient was computed on
  double distance_sq = 0.0;     // ||w_j - w_tau(j)||^2; computed only when needs_distance()
};

class LearningRate {
 public:
  virtual ~LearningRate() = default;
  virtual double rate(const LrContext& ctx) const = 0;
  // True when rate() reads distance_sq (the server then computes it: one pass over w).
  virtual bool needs_distance() const { return false; }
  // The canonical --lr-rule text, e.g. "step:every=1000,factor=0.5".
  virtual std::string describe() const = 0;
};

// Builds the schedule for base rate `base` (--lr) and rule text `rule` (--lr-rule):
//   fixed                         lr
//   step:every=N,factor=F         lr * F^floor(j / N)
//   exp:decay=D                   lr * D^j
//   inv-staleness                 lr / max(1, staleness)               (Zhang et al. 2016)
//   dutta:c=C                     min(C / ||w_j - w_tau(j)||^2, lr)    (Dutta et al. 2018, §5)
Result<std::unique_ptr<LearningRate>> make_learning_rate(double base, std::string_view rule);

}  // namespace stalesgd
