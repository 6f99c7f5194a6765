// Standard normal cdf and quantile (see normal.hpp). Coefficients: P. J. Acklam, "An algorithm
// for computing the inverse normal cumulative distribution function" (2003).
#include "straggler/normal.hpp"

#include <cmath>
#include <limits>
#include <numbers>

namespace stalesgd::straggler {
namespace {

constexpr double kA[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                         1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
constexpr double kB[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                         6.680131188771972e+01, -1.328068155288572e+01};
constexpr double kC[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                         -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
constexpr double kD[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                         3.754408661907416e+00};
constexpr double kLow = 0.02425;  // below it (and above 1 - kLow) the tail formula is used

double acklam(double p) {
  if (p < kLow) {
    const double q = std::sqrt(-2 * std::log(p));
    return (((((kC[0] * q + kC[1]) * q + kC[2]) * q + kC[3]) * q + kC[4]) * q + kC[5]) /
           ((((kD[0] * q + kD[1]) * q + kD[2]) * q + kD[3]) * q + 1);
  }
  const double q = p - 0.5;
  const double r = q * q;
  return (((((kA[0] * r + kA[1]) * r + kA[2]) * r + kA[3]) * r + kA[4]) * r + kA[5]) * q /
         (((((kB[0] * r + kB[1]) * r + kB[2]) * r + kB[3]) * r + kB[4]) * r + 1);
}

}  // namespace

double normal_cdf(double z) {
  return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

double normal_quantile(double p) {
  if (std::isnan(p)) return p;
  if (p <= 0) return -std::numeric_limits<double>::infinity();
  if (p >= 1) return std::numeric_limits<double>::infinity();
  // Work in the lower half, where p and Phi(x) carry full relative precision; 1 - p is exact
  // for p >= 0.5 (Sterbenz), so the upper half follows by symmetry without loss.
  if (p > 0.5) return -normal_quantile(1 - p);
  double x = acklam(p);
  // One Halley step: e = Phi(x) - p, u = e / phi(x), x -= u / (1 + x u / 2).
  const double e = normal_cdf(x) - p;
  const double u = e * std::sqrt(2 * std::numbers::pi) * std::exp(x * x / 2);
  x -= u / (1 + x * u / 2);
  return x;
}

}  // namespace stalesgd::straggler
