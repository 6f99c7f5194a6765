// fit_delays: each family's estimates recover the parameters of samples drawn with the
// project's own delay samplers, within 4 standard errors of the estimator (its known sampling
// error at that n), and AIC picks the family that drew them; the one-line errors.
#include "stalesgd/theory/delay_fit.hpp"

#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "stalesgd/straggler/distribution.hpp"
#include "stalesgd/util/seed.hpp"

using namespace stalesgd;
using Catch::Matchers::Contains;

namespace {

constexpr std::size_t kN = 200000;
constexpr double kSe = 4.0;  // tolerance in standard errors: a false failure ~1e-4 per check

std::vector<double> draw(const std::string& spec, std::uint64_t seed) {
  auto d = parse_distribution(spec);
  REQUIRE(d.ok());
  Rng rng(seed);
  std::vector<double> x(kN);
  for (auto& v : x) v = (*d)->sample(rng);
  return x;
}

const FamilyFit& family(const DelayFit& fit, const std::string& name) {
  for (const auto& f : fit.families) {
    if (f.family == name) return f;
  }
  FAIL("no family " << name);
  return fit.families.front();
}

double param(const FamilyFit& f, const std::string& name) {
  for (const auto& p : f.parameters) {
    if (p.name == name) return p.value;
  }
  FAIL("no parameter " << name << " in " << f.family);
  return 0.0;
}

// The chosen spec parses back as a delay spec.
void check_spec_parses(const DelayFit& fit) {
  for (const auto& f : fit.families) {
    INFO(f.spec);
    CHECK(parse_distribution(f.spec).ok());
  }
}

}  // namespace

TEST_CASE("fit_delays recovers an exponential's mean", "[theory][fit]") {
  const double m = 0.010;
  auto fit = fit_delays(draw("exp:mean=10ms", 1));
  REQUIRE(fit.ok());
  const double n = kN;
  // SE of the sample mean: m / sqrt(n).
  CHECK(std::abs(param(family(*fit, "exp"), "mean") - m) < kSe * m / std::sqrt(n));
  // The exponential is the shifted one at shift 0, on the boundary of its space: AIC prefers
  // the extra parameter with probability e^-1 (n min / mean ~ Exp(1) must exceed 1), and then
  // its shift is within a few m / n of 0.
  const FamilyFit& best = fit->best();
  CHECK((best.family == "exp" ||
         (best.family == "shifted-exp" && param(best, "shift") < kSe * m / n)));
  check_spec_parses(*fit);
}

TEST_CASE("fit_delays recovers a shifted exponential's shift and mean", "[theory][fit]") {
  const double shift = 0.005, m = 0.010;
  auto fit = fit_delays(draw("shifted-exp:shift=5ms,mean=10ms", 2));
  REQUIRE(fit.ok());
  const double n = kN;
  const FamilyFit& f = family(*fit, "shifted-exp");
  // min - shift ~ Exp(mean m / n): the shift's SE is m / n; the mean's is m / sqrt(n).
  CHECK(std::abs(param(f, "shift") - shift) < kSe * m / n);
  CHECK(std::abs(param(f, "mean") - m) < kSe * m / std::sqrt(n));
  CHECK(fit->best().family == "shifted-exp");
  CHECK(fit->best().spec.starts_with("shifted-exp:shift=5"));
  check_spec_parses(*fit);
}

TEST_CASE("fit_delays recovers a Pareto's scale and shape", "[theory][fit]") {
  const double scale = 0.005, a = 2.5;
  auto fit = fit_delays(draw("pareto:scale=5ms,shape=2.5", 3));
  REQUIRE(fit.ok());
  const double n = kN;
  const FamilyFit& f = family(*fit, "pareto");
  // min - scale is about Exp(mean scale / (n a)); the shape's asymptotic SE is a / sqrt(n).
  CHECK(std::abs(param(f, "scale") - scale) < kSe * scale / (n * a));
  CHECK(std::abs(param(f, "shape") - a) < kSe * a / std::sqrt(n));
  CHECK(fit->best().family == "pareto");
  check_spec_parses(*fit);
}

TEST_CASE("fit_delays recovers a lognormal's median and sigma", "[theory][fit]") {
  const double median = 0.008, sigma = 0.6;
  auto fit = fit_delays(draw("lognormal:median=8ms,sigma=0.6", 4));
  REQUIRE(fit.ok());
  const double n = kN;
  const FamilyFit& f = family(*fit, "lognormal");
  // mu = avg ln x has SE sigma / sqrt(n), so the median e^mu a relative one; sigma's SE is
  // sigma / sqrt(2 n).
  CHECK(std::abs(std::log(param(f, "median") / median)) < kSe * sigma / std::sqrt(n));
  CHECK(std::abs(param(f, "sigma") - sigma) < kSe * sigma / std::sqrt(2 * n));
  CHECK(fit->best().family == "lognormal");
  check_spec_parses(*fit);
}

TEST_CASE("fit_delays log-likelihoods are the maxima, and AIC charges the second parameter",
          "[theory][fit]") {
  const std::vector<double> x{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  auto fit = fit_delays(x);
  REQUIRE(fit.ok());
  const FamilyFit& e = family(*fit, "exp");
  CHECK(e.log_likelihood == Approx(-10 * std::log(5.5) - 10));
  CHECK(e.aic == Approx(2 - 2 * e.log_likelihood));
  const FamilyFit& s = family(*fit, "shifted-exp");
  CHECK(s.log_likelihood == Approx(-10 * std::log(4.5) - 10));
  CHECK(s.aic == Approx(4 - 2 * s.log_likelihood));
  // The unbiased estimates: mean' = n/(n-1) (avg - min) = 5, shift' = min - mean'/n = 0.5.
  CHECK(param(s, "mean") == Approx(5.0));
  CHECK(param(s, "shift") == Approx(0.5));
  CHECK(fit->mean_s == Approx(5.5));
  CHECK(fit->median_s == Approx(5.5));
  CHECK(fit->min_s == 1.0);
  CHECK(fit->max_s == 10.0);
}

TEST_CASE("fit_delays refuses what it cannot fit, in one line", "[theory][fit]") {
  CHECK_THAT(fit_delays(std::vector<double>(9, 1.0)).error().message, Contains("too few"));
  CHECK_THAT(fit_delays(std::vector<double>(20, 0.004)).error().message,
             Contains("constant") && Contains("const:4ms"));
  std::vector<double> bad(20, 1.0);
  bad[3] = -1.0;
  CHECK_THAT(fit_delays(bad).error().message, Contains("duration 4"));
  bad[3] = std::nan("");
  CHECK_THAT(fit_delays(bad).error().message, Contains("finite"));
  // A zero duration: no Pareto or lognormal, the exponentials still fit.
  std::vector<double> zero{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  auto fit = fit_delays(zero);
  REQUIRE(fit.ok());
  CHECK_FALSE(family(*fit, "pareto").fitted);
  CHECK_FALSE(family(*fit, "lognormal").fitted);
  CHECK(family(*fit, "exp").fitted);
}

TEST_CASE("spec_duration writes 4 significant digits in a unit parse_duration reads",
          "[theory][fit]") {
  CHECK(spec_duration(0.0050123456) == "5.012ms");
  CHECK(spec_duration(0.00025) == "250us");
  CHECK(spec_duration(1.5) == "1.5s");
  CHECK(spec_duration(3e-9) == "3ns");
  CHECK(spec_duration(0.0) == "0s");
}
