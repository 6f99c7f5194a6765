// mix:<w1>*<spec1>+<w2>*<spec2>+...: with probability w_i, X is a draw of component i.
// mean sum w_i E[X_i]; cdf(x) = sum w_i F_i(x); quantile by bisection on the cdf, which lies
// between the smallest and the largest component quantile at p.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <vector>

#include "straggler/families.hpp"
#include "util/uniform01.hpp"

namespace stalesgd::straggler {
namespace {

constexpr double kWeightTolerance = 1e-9;  // |sum of weights - 1| allowed

struct Component {
  double weight;      // as written
  double cumulative;  // normalised running sum: the last one is exactly 1
  DistPtr dist;
};

class Mixture final : public Distribution {
 public:
  explicit Mixture(std::vector<Component> parts) : parts_(std::move(parts)) {}

  // One U picks the component, the component then draws its own.
  double sample(Rng& rng) const override {
    const double u = uniform01(rng);
    for (const Component& c : parts_) {
      if (u < c.cumulative) return c.dist->sample(rng);
    }
    return parts_.back().dist->sample(rng);
  }
  double mean() const override {
    double m = 0;
    for (const Component& c : parts_) m += probability(c) * c.dist->mean();
    return m;
  }
  double cdf(double x) const override {
    double f = 0;
    for (const Component& c : parts_) f += probability(c) * c.dist->cdf(x);
    return std::min(f, 1.0);
  }
  double quantile(double p) const override {
    if (std::isnan(p)) return p;
    p = clamp_probability(p);
    double lo = std::numeric_limits<double>::infinity();
    double hi = 0;
    for (const Component& c : parts_) {
      lo = std::min(lo, c.dist->quantile(p));
      hi = std::max(hi, c.dist->quantile(p));
    }
    if (cdf(lo) >= p) return lo;
    if (!std::isfinite(hi)) {  // a component's quantile overflowed: search up to the largest double
      hi = std::numeric_limits<double>::max();
      if (cdf(hi) < p) return std::numeric_limits<double>::infinity();
    }
    // Invariant: cdf(lo) < p <= cdf(hi). Halve until lo and hi are adjacent doubles.
    for (int i = 0; i < 2100; ++i) {
      const double mid = lo + (hi - lo) / 2;
      if (mid <= lo || mid >= hi) break;
      (cdf(mid) >= p ? hi : lo) = mid;
    }
    return hi;
  }
  std::string describe() const override {
    std::string out = "mix:";
    for (const Component& c : parts_) {
      if (&c != &parts_.front()) out += '+';
      out += spec::format_number(c.weight) + "*" + c.dist->describe();
    }
    return out;
  }

 private:
  double probability(const Component& c) const {
    return c.cumulative - (&c == &parts_.front() ? 0.0 : (&c - 1)->cumulative);
  }
  std::vector<Component> parts_;
};

constexpr spec::Family kInfo{"mix",
                             "mix:<weight>*<spec>+<weight>*<spec>... with weights summing to 1, "
                             "e.g. mix:0.9*exp:mean=5ms+0.1*const:200ms"};

// Splits at '+' except inside a number's exponent ("1e+3ms").
std::vector<std::string_view> split_components(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size()) {
      if (text[i] != '+') continue;
      const bool exponent =
          i >= 2 && (text[i - 1] == 'e' || text[i - 1] == 'E') &&
          (std::isdigit(static_cast<unsigned char>(text[i - 2])) || text[i - 2] == '.');
      if (exponent) continue;
    }
    out.push_back(text.substr(start, i - start));
    start = i + 1;
  }
  return out;
}

Result<DistPtr> parse_mixture(std::string_view params, const ParseContext& ctx) {
  if (ctx.in_mixture) {
    return Error{
        fmt::format("a mixture cannot contain a mixture; list all components in one "
                    "mix:, e.g. mix:0.9*exp:mean=5ms+0.1*const:200ms")};
  }
  std::vector<Component> parts;
  double sum = 0;
  for (std::string_view item : split_components(params)) {
    item = spec::trim(item);
    const auto star = item.find('*');
    if (star == std::string_view::npos) {
      return Error{
          fmt::format("mixture component '{}' has no weight; write <weight>*<spec>, "
                      "e.g. mix:0.9*exp:mean=5ms+0.1*const:200ms",
                      spec::printable(item))};
    }
    auto weight = spec::parse_number(item.substr(0, star), "mixture weight");
    if (!weight) return weight.error();
    if (*weight <= 0) {
      return Error{
          fmt::format("mixture weight '{}' must be > 0; give every component a positive "
                      "weight, with weights summing to 1",
                      spec::printable(spec::trim(item.substr(0, star))))};
    }
    const std::string_view inner = spec::trim(item.substr(star + 1));
    if (family_name(inner) == "trace") {
      return Error{
          "a trace cannot be a mixture component; use trace: as a whole spec or in a "
          "per-worker clause, e.g. exp:mean=10ms;w3=trace:delays.csv"};
    }
    auto dist = parse_family(inner, {ctx.base_dir, true});
    if (!dist) return dist.error();
    sum += *weight;
    parts.push_back({*weight, sum, std::move(*dist)});
  }
  if (std::abs(sum - 1) > kWeightTolerance) {
    return Error{
        fmt::format("mixture weights sum to {:.10g}, not 1; make them sum to 1, "
                    "e.g. mix:0.9*exp:mean=5ms+0.1*const:200ms",
                    sum)};
  }
  for (Component& c : parts) c.cumulative /= sum;
  parts.back().cumulative = 1.0;
  return DistPtr(std::make_unique<Mixture>(std::move(parts)));
}

}  // namespace

const FamilyEntry kMixtureFamily{kInfo, true, parse_mixture};

}  // namespace stalesgd::straggler
