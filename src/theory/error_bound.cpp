// The error bounds after Dutta et al. 2018: Lemma 1 (K-sync, K-batch-sync) and Theorem 3'
// (K-async, derived under Lemma 1's lr <= 1/L), and the error-versus-wallclock curve
// J = t / E[T]; docs/theory.md, "Error".
#include "stalesgd/theory/error_bound.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace stalesgd {
namespace {

// Both statements share one shape: the strongly convex SGD recursion
//   e_{j+1} <= (1 - eta g c) e_j + eta^2 L sigma^2 / (2 K m),
// with g = 1 (Lemma 1) or gamma' (Theorem 3'); its fixed point is the floor.
ErrorBound contraction(const ErrorConstants& k, double g, double lr, int K, int batch) {
  ErrorBound b;
  b.gamma_prime = g;
  b.initial_gap = k.initial_gap;
  b.floor = lr * k.L * k.sigma2 / (2.0 * k.c * g * K * batch);
  b.rate = 1.0 - lr * g * k.c;
  if (!(b.rate >= 0.0 && b.rate < 1.0)) {
    b.warnings.push_back(
        fmt::format("lr gamma' c = {:.3g} is outside (0, 1]: the bound's contraction does not hold",
                    1 - b.rate));
    b.rate = std::clamp(b.rate, 0.0, 1.0);
  }
  if (b.floor >= b.initial_gap) {
    b.warnings.push_back(
        fmt::format("the floor {:.3g} is above F(w0) - F* = {:.3g}: at this lr the bound says no "
                    "more than that the error stays below the floor",
                    b.floor, b.initial_gap));
  }
  return b;
}

// Both bounds assume lr <= 1/L (the step drops the |grad|^2 term of the smoothness bound).
void check_step(ErrorBound& b, const ErrorConstants& k, double lr) {
  if (lr * k.L > 1.0) {
    b.warnings.push_back(fmt::format("lr L = {:.3g} > 1: {} assumes lr <= 1/L = {:.3g}", lr * k.L,
                                     b.theorem, 1 / k.L));
  }
}

}  // namespace

ErrorBound k_sync_error_bound(const ErrorConstants& k, double lr, int K, int batch) {
  ErrorBound b = contraction(k, 1.0, lr, K, batch);
  b.theorem = "Lemma 1";
  check_step(b, k, lr);
  return b;
}

ErrorBound k_async_error_bound(const ErrorConstants& k, const Staleness& s, double lr, int K,
                               int batch) {
  ErrorBound b = contraction(k, 1.0 - (1.0 - s.p0) * s.gamma, lr, K, batch);
  b.theorem = "Theorem 3'";
  check_step(b, k, lr);
  if (s.gamma > 1.0 || s.gamma < 0.0) {
    b.warnings.push_back(
        fmt::format("gamma = {:.3g} is outside [0, 1]: Theorem 3' needs 0 <= gamma <= 1", s.gamma));
  }
  if (s.p0 > 1.0 || s.p0 < 0.0) {
    b.warnings.push_back(fmt::format("p0 = {:.3g} is not a probability", s.p0));
  }
  return b;
}

ErrorBound error_bound(const RuleConfig& rule, const ErrorConstants& k, const Staleness& s,
                       double lr, int batch) {
  if (rule.synchronous()) return k_sync_error_bound(k, lr, rule.k, batch);
  return k_async_error_bound(k, s, lr, rule.k, batch);
}

double error_after(const ErrorBound& b, double iterations) {
  return b.floor + std::pow(b.rate, iterations) * (b.initial_gap - b.floor);
}

double error_at_time(const ErrorBound& b, double seconds, double seconds_per_iteration) {
  return error_after(b, seconds / seconds_per_iteration);
}

double k_async_fresh_probability(int K, int P) {
  return static_cast<double>(K) / static_cast<double>(P);
}

double drift_gamma(double lr, double L, double mean_staleness) {
  const double g = lr * L * mean_staleness;
  return std::min(1.0, g * g);
}

}  // namespace stalesgd
