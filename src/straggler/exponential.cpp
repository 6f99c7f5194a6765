// exp:mean=<time>: X ~ Exp(rate 1/m), the paper's delay model (Dutta et al. 2018, §3).
// mean m; cdf(x) = 1 - exp(-x/m); quantile(p) = -m log(1 - p).
#include <fmt/format.h>

#include <cmath>

#include "stalesgd/straggler/duration.hpp"
#include "straggler/families.hpp"
#include "util/uniform01.hpp"

namespace stalesgd::straggler {
namespace {

class Exponential final : public Distribution {
 public:
  explicit Exponential(double mean_s) : mean_s_(mean_s) {}

  double sample(Rng& rng) const override { return finite_draw(quantile(uniform01(rng))); }
  double mean() const override { return mean_s_; }
  double cdf(double x) const override { return x <= 0 ? 0.0 : -std::expm1(-x / mean_s_); }
  double quantile(double p) const override {
    return -mean_s_ * std::log1p(-clamp_probability(p));  // log1p keeps small p exact
  }
  std::string describe() const override { return "exp:mean=" + format_duration(mean_s_); }
  std::optional<ShiftedExponentialParams> as_shifted_exponential() const override {
    return ShiftedExponentialParams{0.0, mean_s_};
  }

 private:
  double mean_s_;
};

constexpr spec::Family kInfo{"exp", "exp:mean=<time>, e.g. exp:mean=20ms"};

Result<DistPtr> parse_exponential(std::string_view params, const ParseContext&) {
  auto list = spec::ParamList::parse(params, kInfo, {"mean"});
  if (!list) return list.error();
  auto mean = list->time("mean", spec::Bound::kPositive);
  if (!mean) return mean.error();
  return DistPtr(std::make_unique<Exponential>(*mean));
}

}  // namespace

const FamilyEntry kExponentialFamily{kInfo, true, parse_exponential};

}  // namespace stalesgd::straggler
