// lr_j = lr * decay^j.
#include <cmath>

#include <fmt/format.h>

#include "lr/schedules.hpp"

namespace stalesgd {
namespace {

class ExponentialDecay final : public LearningRate {
 public:
  ExponentialDecay(double base, double decay) : base_(base), decay_(decay) {}
  double rate(const LrContext& ctx) const override {
    return base_ * std::pow(decay_, static_cast<double>(ctx.iteration));
  }
  std::string describe() const override { return fmt::format("exp:decay={}", decay_); }

 private:
  double base_;
  double decay_;
};

}  // namespace

std::unique_ptr<LearningRate> make_exponential_decay(double base, double decay) {
  return std::make_unique<ExponentialDecay>(base, decay);
}

}  // namespace stalesgd
