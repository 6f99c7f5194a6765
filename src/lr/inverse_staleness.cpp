// Zhang, Gupta, Lian, Liu, "Staleness-aware Async-SGD for Distributed Deep Learning" (IJCAI 2016):
// lr_j = lr / tau for a gradient of staleness tau (tau = 0 is treated as 1).
#include <algorithm>

#include "lr/schedules.hpp"

namespace stalesgd {
namespace {

class InverseStaleness final : public LearningRate {
 public:
  explicit InverseStaleness(double base) : base_(base) {}
  double rate(const LrContext& ctx) const override {
    return base_ / static_cast<double>(std::max<std::uint64_t>(1, ctx.staleness));
  }
  std::string describe() const override { return "inv-staleness"; }

 private:
  double base_;
};

}  // namespace

std::unique_ptr<LearningRate> make_inverse_staleness(double base) {
  return std::make_unique<InverseStaleness>(base);
}

}  // namespace stalesgd
