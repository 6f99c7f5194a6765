// Maximum-likelihood fits of the four delay families to measured durations, chosen by AIC
// (Akaike 1974: AIC = 2k - 2 ln L, which charges shifted-exp, Pareto and lognormal for their
// second parameter against the one-parameter exponential). docs/theory.md, "Fitted delays".
#include "stalesgd/theory/delay_fit.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include <fmt/format.h>

namespace stalesgd {
namespace {

constexpr std::size_t kMinDurations = 10;

std::string number(double v) {
  return fmt::format("{:.4g}", v);
}

std::string spec_of(const FamilyFit& f) {
  std::string s = f.family + ":";
  for (std::size_t i = 0; i < f.parameters.size(); ++i) {
    const FitParameter& p = f.parameters[i];
    s += fmt::format("{}{}={}", i ? "," : "", p.name,
                     p.seconds ? spec_duration(p.value) : number(p.value));
  }
  return s;
}

void finish(FamilyFit& f, int free_parameters, double log_likelihood) {
  f.fitted = true;
  f.free_parameters = free_parameters;
  f.log_likelihood = log_likelihood;
  f.aic = 2.0 * free_parameters - 2.0 * log_likelihood;
  f.spec = spec_of(f);
}

// Exp(mean m): ln L = -n ln m - sum x / m, at m = avg x: -n ln(avg) - n.
FamilyFit fit_exponential(double n, double avg) {
  FamilyFit f;
  f.family = "exp";
  if (!(avg > 0.0)) {
    f.not_fitted = "every duration is 0";
    return f;
  }
  f.parameters = {{"mean", avg, true}};
  finish(f, 1, -n * std::log(avg) - n);
  return f;
}

// shift + Exp(mean m): ln L = -n ln m - sum (x - shift) / m, at shift = min, m = avg - min.
FamilyFit fit_shifted_exponential(double n, double avg, double min) {
  FamilyFit f;
  f.family = "shifted-exp";
  const double m = avg - min;  // > 0: the durations are not all equal
  const double unbiased_mean = n / (n - 1.0) * m;
  const double unbiased_shift = std::max(0.0, min - unbiased_mean / n);
  f.parameters = {{"shift", unbiased_shift, true}, {"mean", unbiased_mean, true}};
  finish(f, 2, -n * std::log(m) - n);
  return f;
}

// Pareto(scale s, shape a): ln L = n ln a + n a ln s - (a + 1) sum ln x, at s = min,
// a = n / sum ln(x / s).
FamilyFit fit_pareto(std::span<const double> x, double min) {
  FamilyFit f;
  f.family = "pareto";
  if (!(min > 0.0)) {
    f.not_fitted = "a duration of 0 (the Pareto's support starts at its scale > 0)";
    return f;
  }
  const double n = static_cast<double>(x.size());
  double sum_log_ratio = 0.0, sum_log = 0.0;
  for (double v : x) {
    sum_log_ratio += std::log(v / min);
    sum_log += std::log(v);
  }
  const double a = n / sum_log_ratio;
  f.parameters = {{"scale", min, true}, {"shape", (n - 2.0) / n * a, false}};
  finish(f, 2, n * std::log(a) + n * a * std::log(min) - (a + 1.0) * sum_log);
  return f;
}

// Lognormal(mu, sigma): ln L = -sum ln x - n ln sigma - n/2 ln(2 pi) - sum (ln x - mu)^2 /
// (2 sigma^2), at the MLEs the last term is n/2.
FamilyFit fit_lognormal(std::span<const double> x, double min) {
  FamilyFit f;
  f.family = "lognormal";
  if (!(min > 0.0)) {
    f.not_fitted = "a duration of 0 has no logarithm";
    return f;
  }
  const double n = static_cast<double>(x.size());
  double sum_log = 0.0;
  for (double v : x) sum_log += std::log(v);
  const double mu = sum_log / n;
  double ss = 0.0;
  for (double v : x) ss += (std::log(v) - mu) * (std::log(v) - mu);
  const double sigma = std::sqrt(ss / n);
  if (!(sigma > 0.0)) {
    f.not_fitted = "the logarithms of the durations do not vary";
    return f;
  }
  f.parameters = {{"median", std::exp(mu), true}, {"sigma", std::sqrt(ss / (n - 1.0)), false}};
  finish(f, 2,
         -sum_log - n * std::log(sigma) - n / 2.0 * std::log(2.0 * std::numbers::pi) - n / 2.0);
  return f;
}

}  // namespace

std::string spec_duration(double seconds) {
  if (seconds == 0.0) return "0s";
  constexpr struct {
    const char* name;
    double per_second;
  } kUnits[] = {{"s", 1.0}, {"ms", 1e3}, {"us", 1e6}, {"ns", 1e9}};
  for (const auto& u : kUnits) {
    const double v = seconds * u.per_second;
    if (v >= 1.0 || u.per_second == 1e9) return number(v) + u.name;
  }
  return "0s";  // not reached
}

Result<DelayFit> fit_delays(std::span<const double> durations_s) {
  if (durations_s.size() < kMinDurations) {
    return Error{
        fmt::format("{} durations are too few to fit a distribution; a run needs at "
                    "least {} applied gradients",
                    durations_s.size(), kMinDurations)};
  }
  for (std::size_t i = 0; i < durations_s.size(); ++i) {
    if (!std::isfinite(durations_s[i]) || durations_s[i] < 0.0) {
      return Error{fmt::format("duration {} is {}: durations must be finite and >= 0", i + 1,
                               durations_s[i])};
    }
  }
  DelayFit fit;
  fit.n = durations_s.size();
  const double n = static_cast<double>(fit.n);
  std::vector<double> sorted(durations_s.begin(), durations_s.end());
  std::sort(sorted.begin(), sorted.end());
  fit.min_s = sorted.front();
  fit.max_s = sorted.back();
  fit.median_s = fit.n % 2 ? sorted[fit.n / 2] : (sorted[fit.n / 2 - 1] + sorted[fit.n / 2]) / 2;
  double sum = 0.0;
  for (double v : sorted) sum += v;  // ascending: less rounding
  fit.mean_s = sum / n;
  if (fit.min_s == fit.max_s) {
    return Error{
        fmt::format("all {} durations are {} s: a constant time has nothing to fit "
                    "(as a delay spec: const:{})",
                    fit.n, fit.min_s, spec_duration(fit.min_s))};
  }
  fit.families = {fit_exponential(n, fit.mean_s), fit_shifted_exponential(n, fit.mean_s, fit.min_s),
                  fit_pareto(durations_s, fit.min_s), fit_lognormal(durations_s, fit.min_s)};
  bool any = false;
  for (std::size_t i = 0; i < fit.families.size(); ++i) {
    const FamilyFit& f = fit.families[i];
    if (f.fitted && (!any || f.aic < fit.families[fit.chosen].aic)) {
      fit.chosen = i;
      any = true;
    }
  }
  // Not reached (avg > 0 when the durations differ, so exp and shifted-exp always fit).
  if (!any) return Error{"no delay family could be fitted to the durations"};
  return fit;
}

}  // namespace stalesgd
