// uniform:<lo>..<hi>: X uniform on [lo, hi].
// mean (lo + hi) / 2; cdf(x) = (x - lo) / (hi - lo) on [lo, hi]; quantile(p) = lo + p (hi - lo).
#include <fmt/format.h>

#include "stalesgd/straggler/duration.hpp"
#include "straggler/families.hpp"
#include "util/uniform01.hpp"

namespace stalesgd::straggler {
namespace {

class Uniform final : public Distribution {
 public:
  Uniform(double lo_s, double hi_s) : lo_s_(lo_s), hi_s_(hi_s) {}

  double sample(Rng& rng) const override { return quantile(uniform01(rng)); }
  double mean() const override { return lo_s_ + (hi_s_ - lo_s_) / 2; }
  double cdf(double x) const override {
    if (x >= hi_s_) return 1.0;  // first, so that lo == hi is a step at lo
    if (x <= lo_s_) return 0.0;
    return (x - lo_s_) / (hi_s_ - lo_s_);
  }
  double quantile(double p) const override {
    return lo_s_ + clamp_probability(p) * (hi_s_ - lo_s_);
  }
  std::string describe() const override {
    return fmt::format("uniform:{}..{}", format_duration(lo_s_), format_duration(hi_s_));
  }

 private:
  double lo_s_;
  double hi_s_;
};

constexpr spec::Family kInfo{"uniform", "uniform:<lo>..<hi>, e.g. uniform:5ms..15ms"};

Result<DistPtr> parse_uniform(std::string_view params, const ParseContext&) {
  const auto dots = params.find("..");
  if (dots == std::string_view::npos) {
    return Error{fmt::format("uniform range '{}' has no '..'; use {}", spec::printable(params),
                             kInfo.usage)};
  }
  auto lo = parse_duration(params.substr(0, dots));
  if (!lo) return Error{fmt::format("uniform lower bound: {}", lo.error().message)};
  auto hi = parse_duration(params.substr(dots + 2));
  if (!hi) return Error{fmt::format("uniform upper bound: {}", hi.error().message)};
  if (*lo > *hi) {
    return Error{
        fmt::format("uniform lower bound {} is above the upper bound {}; write "
                    "uniform:<lo>..<hi> with lo <= hi, e.g. uniform:5ms..15ms",
                    format_duration(*lo), format_duration(*hi))};
  }
  return DistPtr(std::make_unique<Uniform>(*lo, *hi));
}

}  // namespace

const FamilyEntry kUniformFamily{kInfo, true, parse_uniform};

}  // namespace stalesgd::straggler
