// lognormal:median=<m>,sigma=<s>: X = m exp(s Z), Z standard normal, i.e. log X ~ N(log m, s^2).
// mean m exp(s^2 / 2); cdf(x) = Phi(log(x / m) / s); quantile(p) = m exp(s Phi^-1(p)).
// lognormal:mean=<mu>,sigma=<s> gives the same family with m = mu exp(-s^2 / 2).
#include <fmt/format.h>

#include <cmath>

#include "stalesgd/straggler/duration.hpp"
#include "straggler/families.hpp"
#include "straggler/normal.hpp"
#include "util/uniform01.hpp"

namespace stalesgd::straggler {
namespace {

class Lognormal final : public Distribution {
 public:
  // by_mean: the spec gave the mean (kept exactly for mean() and describe()).
  Lognormal(double location_s, double sigma, bool by_mean)
      : median_s_(by_mean ? location_s * std::exp(-sigma * sigma / 2) : location_s),
        mean_s_(by_mean ? location_s : location_s * std::exp(sigma * sigma / 2)),
        sigma_(sigma),
        by_mean_(by_mean) {}

  double sample(Rng& rng) const override { return finite_draw(quantile(uniform01(rng))); }
  double mean() const override { return mean_s_; }
  double cdf(double x) const override {
    return x <= 0 ? 0.0 : normal_cdf(std::log(x / median_s_) / sigma_);
  }
  double quantile(double p) const override {
    return median_s_ * std::exp(sigma_ * normal_quantile(clamp_probability(p)));
  }
  std::string describe() const override {
    return fmt::format("lognormal:{}={},sigma={}", by_mean_ ? "mean" : "median",
                       format_duration(by_mean_ ? mean_s_ : median_s_),
                       spec::format_number(sigma_));
  }

 private:
  double median_s_;
  double mean_s_;
  double sigma_;
  bool by_mean_;
};

constexpr spec::Family kInfo{"lognormal",
                             "lognormal:median=<time>,sigma=<number> (or mean=<time> for median=), "
                             "e.g. lognormal:median=10ms,sigma=0.5"};

Result<DistPtr> parse_lognormal(std::string_view params, const ParseContext&) {
  auto list = spec::ParamList::parse(params, kInfo, {"median", "mean", "sigma"});
  if (!list) return list.error();
  if (list->has("median") && list->has("mean")) {
    return Error{fmt::format("lognormal takes median or mean, not both; use {}", kInfo.usage)};
  }
  const bool by_mean = list->has("mean");
  auto location = list->time(by_mean ? "mean" : "median", spec::Bound::kPositive);
  if (!location) return location.error();
  auto sigma = list->number("sigma", spec::Bound::kPositive);
  if (!sigma) return sigma.error();
  // A median of 0 (mean exp(-s^2 / 2) underflows for s over about 38) made draws 0 * inf = NaN
  // (a fuzzer finding, docs/reliability.md).
  if (by_mean && *location * std::exp(-*sigma * *sigma / 2) == 0) {
    return Error{fmt::format(
        "lognormal sigma {} is too large for mean={}: the median mean*exp(-sigma^2/2) is 0 in "
        "double precision; use a smaller sigma, e.g. lognormal:mean=10ms,sigma=0.5",
        spec::format_number(*sigma), format_duration(*location))};
  }
  return DistPtr(std::make_unique<Lognormal>(*location, *sigma, by_mean));
}

}  // namespace

const FamilyEntry kLognormalFamily{kInfo, true, parse_lognormal};

}  // namespace stalesgd::straggler
