// shifted-exp:shift=<s>,mean=<m>: X = s + Exp(mean m), the paper's shifted exponential
// (Dutta et al. 2018, §3, a "new-longer-than-used" distribution).
// mean s + m; cdf(x) = 1 - exp(-(x - s)/m) for x >= s; quantile(p) = s - m log(1 - p).
#include <fmt/format.h>

#include <cmath>

#include "stalesgd/straggler/duration.hpp"
#include "straggler/families.hpp"
#include "util/uniform01.hpp"

namespace stalesgd::straggler {
namespace {

class ShiftedExponential final : public Distribution {
 public:
  ShiftedExponential(double shift_s, double mean_s) : shift_s_(shift_s), mean_s_(mean_s) {}

  double sample(Rng& rng) const override { return finite_draw(quantile(uniform01(rng))); }
  double mean() const override { return shift_s_ + mean_s_; }
  double cdf(double x) const override {
    return x <= shift_s_ ? 0.0 : -std::expm1(-(x - shift_s_) / mean_s_);
  }
  double quantile(double p) const override {
    return shift_s_ - mean_s_ * std::log1p(-clamp_probability(p));
  }
  std::string describe() const override {
    return fmt::format("shifted-exp:shift={},mean={}", format_duration(shift_s_),
                       format_duration(mean_s_));
  }
  std::optional<ShiftedExponentialParams> as_shifted_exponential() const override {
    return ShiftedExponentialParams{shift_s_, mean_s_};
  }

 private:
  double shift_s_;
  double mean_s_;  // of the exponential part
};

constexpr spec::Family kInfo{
    "shifted-exp", "shifted-exp:shift=<time>,mean=<time>, e.g. shifted-exp:shift=5ms,mean=10ms"};

Result<DistPtr> parse_shifted_exponential(std::string_view params, const ParseContext&) {
  auto list = spec::ParamList::parse(params, kInfo, {"shift", "mean"});
  if (!list) return list.error();
  auto shift = list->time("shift", spec::Bound::kNonNegative);
  if (!shift) return shift.error();
  auto mean = list->time("mean", spec::Bound::kPositive);
  if (!mean) return mean.error();
  return DistPtr(std::make_unique<ShiftedExponential>(*shift, *mean));
}

}  // namespace

const FamilyEntry kShiftedExponentialFamily{kInfo, true, parse_shifted_exponential};

}  // namespace stalesgd::straggler
