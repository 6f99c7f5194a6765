// lr_j = lr.
#include <fmt/format.h>

#include "lr/schedules.hpp"

namespace stalesgd {
namespace {

class FixedRate final : public LearningRate {
 public:
  explicit FixedRate(double base) : base_(base) {}
  double rate(const LrContext&) const override { return base_; }
  std::string describe() const override { return "fixed"; }

 private:
  double base_;
};

}  // namespace

std::unique_ptr<LearningRate> make_fixed_rate(double base) {
  return std::make_unique<FixedRate>(base);
}

}  // namespace stalesgd
