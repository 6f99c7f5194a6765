// Fitting a delay spec to measured minibatch durations (gradients.csv's duration_s): maximum
// likelihood for the exponential, shifted-exponential, Pareto and lognormal families, and the
// choice among them by AIC, so that `stalesgd theory --fit` can predict a run's time per
// iteration from the durations it measured (docs/theory.md, "Fitted delays").
#pragma once

#include <span>
#include <string>
#include <vector>

#include "stalesgd/util/result.hpp"

namespace stalesgd {

// One parameter of a fitted family, as the delay spec names it.
struct FitParameter {
  std::string name;  // "mean", "shift", "scale", "shape", "median", "sigma"
  double value = 0.0;
  bool seconds = false;  // a time (written with a unit in the spec) or a plain number
};

struct FamilyFit {
  std::string family;  // "exp", "shifted-exp", "pareto", "lognormal"
  bool fitted = false;
  std::string not_fitted;  // why not, when !fitted (e.g. a zero duration has no logarithm)
  // The estimates, corrected for small-sample bias where the MLE has a known one (below).
  std::vector<FitParameter> parameters;
  int free_parameters = 0;      // 1 for exp, 2 for the others
  double log_likelihood = 0.0;  // at the maximum-likelihood estimates
  double aic = 0.0;             // 2 free_parameters - 2 log_likelihood: the lower, the better
  std::string spec;             // the delay spec, e.g. "shifted-exp:shift=5.2ms,mean=4.9ms"
};

struct DelayFit {
  std::size_t n = 0;  // durations fitted
  double mean_s = 0.0;
  double min_s = 0.0;
  double median_s = 0.0;
  double max_s = 0.0;
  std::vector<FamilyFit> families;  // exp, shifted-exp, pareto, lognormal, in that order
  std::size_t chosen = 0;           // index into families: the fitted one with the lowest AIC
  const FamilyFit& best() const { return families[chosen]; }
};

// Fits every family to `durations_s` (seconds) by maximum likelihood, in closed form:
//   exp          mean = avg x
//   shifted-exp  MLE shift = min x, mean = avg x - min x; reported with the unbiased
//                mean' = n/(n-1) (avg - min), shift' = min - mean'/n (the MLE shift is high by
//                mean/n on average)
//   pareto       MLE scale = min x, shape = n / sum ln(x / scale); reported shape' = (n-2)/n
//                shape (unbiased), scale as the MLE
//   lognormal    mu = avg ln x, sigma^2 = avg (ln x - mu)^2; reported sigma with n - 1;
//                median = e^mu
// The log-likelihoods are at the MLEs (what AIC needs); the parameters differ from the MLEs
// by O(1/n). Pareto and lognormal need every duration > 0 (else not fitted, with the reason).
// An Error, one line, for fewer than 10 durations, a negative or non-finite one, or durations
// that are all equal (nothing to fit: the time is a constant).
Result<DelayFit> fit_delays(std::span<const double> durations_s);

// A time for a delay spec, to 4 significant digits in the unit that puts it in [1, 1000)
// ("5.012ms", "250us"); parse_duration reads it back.
std::string spec_duration(double seconds);

}  // namespace stalesgd
