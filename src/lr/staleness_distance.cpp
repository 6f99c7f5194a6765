// Dutta et al. 2018, §5 (staleness-dependent learning rate for K-async/async):
// lr_j = min(C / ||w_j - w_tau(j)||^2, lr_max), where w_tau(j) are the parameters the gradient
// was computed on. A fresh gradient (distance 0) gets lr_max.
#include <algorithm>

#include <fmt/format.h>

#include "lr/schedules.hpp"

namespace stalesgd {
namespace {

class StalenessDistance final : public LearningRate {
 public:
  StalenessDistance(double lr_max, double c) : lr_max_(lr_max), c_(c) {}
  double rate(const LrContext& ctx) const override {
    if (ctx.distance_sq <= 0.0) return lr_max_;
    return std::min(c_ / ctx.distance_sq, lr_max_);
  }
  bool needs_distance() const override { return true; }
  std::string describe() const override { return fmt::format("dutta:c={}", c_); }

 private:
  double lr_max_;
  double c_;
};

}  // namespace

std::unique_ptr<LearningRate> make_staleness_distance(double lr_max, double c) {
  return std::make_unique<StalenessDistance>(lr_max, c);
}

}  // namespace stalesgd
