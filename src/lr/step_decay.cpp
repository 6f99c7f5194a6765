// lr_j = lr * factor^floor(j / every): the rate drops by `factor` every `every` updates.
#include <cmath>

#include <fmt/format.h>

#include "lr/schedules.hpp"

namespace stalesgd {
namespace {

class StepDecay final : public LearningRate {
 public:
  StepDecay(double base, std::uint64_t every, double factor)
      : base_(base), every_(every), factor_(factor) {}
  double rate(const LrContext& ctx) const override {
    return base_ * std::pow(factor_, static_cast<double>(ctx.iteration / every_));
  }
  std::string describe() const override {
    return fmt::format("step:every={},factor={}", every_, factor_);
  }

 private:
  double base_;
  std::uint64_t every_;
  double factor_;
};

}  // namespace

std::unique_ptr<LearningRate> make_step_decay(double base, std::uint64_t every, double factor) {
  return std::make_unique<StepDecay>(base, every, factor);
}

}  // namespace stalesgd
