// const:<time> and none: X is always the same value c (none is c = 0).
// mean c; cdf(x) = [x >= c]; quantile(p) = c.
#include <fmt/format.h>

#include "stalesgd/straggler/duration.hpp"
#include "straggler/families.hpp"
#include "util/uniform01.hpp"

namespace stalesgd::straggler {
namespace {

class Constant final : public Distribution {
 public:
  explicit Constant(double value_s) : value_s_(value_s) {}

  // Draws one U like every other family, so that switching families mid-run (a time change)
  // moves every worker's generator the same way.
  double sample(Rng& rng) const override {
    (void)uniform01(rng);
    return value_s_;
  }
  double mean() const override { return value_s_; }
  double cdf(double x) const override { return x >= value_s_ ? 1.0 : 0.0; }
  double quantile(double) const override { return value_s_; }
  std::string describe() const override {
    return value_s_ == 0 ? "none" : "const:" + format_duration(value_s_);
  }

 private:
  double value_s_;
};

constexpr spec::Family kConstInfo{"const", "const:<time>, e.g. const:10ms"};

Result<DistPtr> parse_none(std::string_view, const ParseContext&) {
  return DistPtr(std::make_unique<Constant>(0.0));
}

Result<DistPtr> parse_constant(std::string_view params, const ParseContext&) {
  auto value = parse_duration(params);
  if (!value) return Error{fmt::format("const: {}", value.error().message)};
  return DistPtr(std::make_unique<Constant>(*value));
}

}  // namespace

const FamilyEntry kNoneFamily{{"none", "none"}, false, parse_none};
const FamilyEntry kConstantFamily{kConstInfo, true, parse_constant};

}  // namespace stalesgd::straggler
