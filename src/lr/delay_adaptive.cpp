// Koloskova, Stich, Jaggi, "Sharper Convergence Guarantees for Asynchronous SGD for Distributed
// and Federated Learning" (NeurIPS 2022), the delay-adaptive step of §4: the full step
// lr for a gradient of delay tau <= tau_C, and min(lr, 1 / (4 L tau)) beyond. With lr the
// paper's 1 / (4 L tau_C), that is lr tau_C / tau: lr_j = lr min(1, C / tau), C = tau_C (the
// paper takes the concurrency, the number of workers). docs/rules.md, "Learning rates".
#include <algorithm>

#include "lr/schedules.hpp"

namespace stalesgd {
namespace {

class DelayAdaptive final : public LearningRate {
 public:
  DelayAdaptive(double base, double c) : base_(base), c_(c) {}
  double rate(const LrContext& ctx) const override {
    const auto tau = static_cast<double>(ctx.staleness);
    return tau <= c_ ? base_ : base_ * c_ / tau;
  }
  std::string describe() const override { return "delay-adaptive"; }

 private:
  double base_;
  double c_;
};

}  // namespace

std::unique_ptr<LearningRate> make_delay_adaptive(double base, double c) {
  return std::make_unique<DelayAdaptive>(base, c);
}

}  // namespace stalesgd
