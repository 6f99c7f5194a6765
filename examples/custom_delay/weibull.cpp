// A delay family of one's own as a plug-in (stalesgd/plugin.hpp): the Weibull distribution,
// `weibull:scale=<time>,shape=<k>`, P(X <= x) = 1 - exp(-(x / scale)^k). A shape below 1 is a
// heavier tail than the exponential (k = 1), above 1 a lighter one. Once the CLI loads it
// (--plugin), it is a delay family wherever a spec is read: --delay, per-worker clauses,
// mixtures, experiment files and theory's Monte Carlo.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

#include <stalesgd/plugin.hpp>
#include <stalesgd/straggler/delay_family.hpp>
#include <stalesgd/straggler/duration.hpp>

namespace {

class Weibull final : public stalesgd::Distribution {
 public:
  Weibull(double scale_s, double shape) : scale_s_(scale_s), shape_(shape) {}

  // By inversion from the generator's top 53 bits, as the built-in families draw, so that a
  // seed fixes the draws bit for bit.
  double sample(stalesgd::Rng& rng) const override {
    const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
    return std::min(quantile(u), std::numeric_limits<double>::max());
  }
  double mean() const override { return scale_s_ * std::tgamma(1.0 + 1.0 / shape_); }
  double cdf(double x) const override {
    return x <= 0.0 ? 0.0 : 1.0 - std::exp(-std::pow(x / scale_s_, shape_));
  }
  double quantile(double p) const override {
    if (!(p > 0.0)) return 0.0;
    if (p >= 1.0) return std::numeric_limits<double>::infinity();
    return scale_s_ * std::pow(-std::log1p(-p), 1.0 / shape_);
  }
  std::string describe() const override {
    return "weibull:scale=" + stalesgd::format_duration(scale_s_) + ",shape=" + shortest(shape_);
  }

 private:
  // The shortest text that reads back to exactly `v`, so that describe() parses back.
  static std::string shortest(double v) {
    for (int digits = 1; digits <= 17; ++digits) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.*g", digits, v);
      if (std::strtod(buf, nullptr) == v) return buf;
    }
    return std::to_string(v);
  }
  double scale_s_;
  double shape_;
};

// "scale=10ms,shape=0.7", in either order, both required.
stalesgd::Result<std::unique_ptr<stalesgd::Distribution>> parse_weibull(std::string_view params) {
  double scale = -1.0, shape = -1.0;
  std::string_view rest = params;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const auto eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    const std::string value(eq == std::string_view::npos ? "" : item.substr(eq + 1));
    if (key == "scale") {
      auto s = stalesgd::parse_duration(value);
      if (!s) return stalesgd::Error{"scale: " + s.error().message};
      scale = *s;
    } else if (key == "shape") {
      char* end = nullptr;
      shape = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !std::isfinite(shape)) {
        return stalesgd::Error{"shape '" + value + "' is not a number"};
      }
    } else {
      return stalesgd::Error{"unknown parameter '" + std::string(key) +
                             "'; give scale=<time> and shape=<k>"};
    }
  }
  if (!(scale > 0.0) || !(shape > 0.0)) {
    return stalesgd::Error{"needs scale > 0 and shape > 0, e.g. weibull:scale=10ms,shape=0.7"};
  }
  return std::unique_ptr<stalesgd::Distribution>(std::make_unique<Weibull>(scale, shape));
}

stalesgd::Status register_weibull() {
  return stalesgd::register_delay_family(
      "weibull", "weibull:scale=<time>,shape=<k>, e.g. weibull:scale=10ms,shape=0.7",
      parse_weibull);
}

}  // namespace

STALESGD_PLUGIN(register_weibull)
