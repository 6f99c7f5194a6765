// pareto:scale=<x_m>,shape=<a>: the Pareto (type I) heavy tail, X >= x_m.
// cdf(x) = 1 - (x_m / x)^a for x >= x_m; quantile(p) = x_m (1 - p)^(-1/a);
// mean a x_m / (a - 1) for a > 1, +infinity for a <= 1 (variance finite only for a > 2).
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "stalesgd/straggler/duration.hpp"
#include "straggler/families.hpp"
#include "util/uniform01.hpp"

namespace stalesgd::straggler {
namespace {

class Pareto final : public Distribution {
 public:
  Pareto(double scale_s, double shape) : scale_s_(scale_s), shape_(shape) {}

  double sample(Rng& rng) const override { return finite_draw(quantile(uniform01(rng))); }
  double mean() const override {
    if (shape_ <= 1) return std::numeric_limits<double>::infinity();
    return shape_ * scale_s_ / (shape_ - 1);
  }
  double cdf(double x) const override {
    return x <= scale_s_ ? 0.0 : -std::expm1(shape_ * std::log(scale_s_ / x));
  }
  double quantile(double p) const override {
    // (1 - p)^(-1/a) = exp(-log1p(-p) / a); +infinity at p = 1.
    return scale_s_ * std::exp(-std::log1p(-clamp_probability(p)) / shape_);
  }
  std::string describe() const override {
    return fmt::format("pareto:scale={},shape={}", format_duration(scale_s_),
                       spec::format_number(shape_));
  }

 private:
  double scale_s_;
  double shape_;
};

constexpr spec::Family kInfo{"pareto",
                             "pareto:scale=<time>,shape=<number>, e.g. pareto:scale=5ms,shape=1.5"};

Result<DistPtr> parse_pareto(std::string_view params, const ParseContext&) {
  auto list = spec::ParamList::parse(params, kInfo, {"scale", "shape"});
  if (!list) return list.error();
  auto scale = list->time("scale", spec::Bound::kPositive);
  if (!scale) return scale.error();
  auto shape = list->number("shape", spec::Bound::kPositive);
  if (!shape) return shape.error();
  return DistPtr(std::make_unique<Pareto>(*scale, *shape));
}

}  // namespace

const FamilyEntry kParetoFamily{kInfo, true, parse_pareto};

}  // namespace stalesgd::straggler
