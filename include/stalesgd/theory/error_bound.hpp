// Error theory after Dutta et al. 2018 (arXiv:1803.01113, §3 and §5): the bound on the expected
// excess loss E[F(w_J)] - F* after J updates with a fixed learning rate, for a c-strongly convex,
// L-smooth F, and the error-versus-wallclock curve it gives with J = t / E[T] (docs/theory.md,
// "Error", which derives both bounds under one step-size condition, lr <= 1/L). Every formula
// lives here and in src/theory/error_bound.cpp, nowhere else.
//
// Thread safety: pure functions of their arguments; call them from any thread.
#pragma once

#include <string>
#include <vector>

#include "stalesgd/rules/rule.hpp"

namespace stalesgd {

// The problem's constants (estimated by src/theory/error_constants.cpp for a model and data).
struct ErrorConstants {
  double c = 0.0;            // strong convexity: F(v) >= F(w) + <grad F(w), v - w> + c/2 |v - w|^2
  double L = 0.0;            // smoothness: |grad F(v) - grad F(w)| <= L |v - w|
  double sigma2 = 0.0;       // variance of ONE sample's gradient, E|g_1(w) - grad F(w)|^2, at w*
  double initial_gap = 0.0;  // F(w_0) - F*
};

// The staleness constants of the asynchronous rules:
//   p0:    the probability that a gradient applied at update j is fresh (computed at w_j,
//          staleness 0): a lower bound on it over j;
//   gamma: for a stale one computed at w_tau, the expectation outside the norm:
//          E|grad F(w_j) - grad F(w_tau)|^2 <= gamma E|grad F(w_j)|^2, with gamma <= 1.
struct Staleness {
  double p0 = 1.0;
  double gamma = 0.0;
};

// E[F(w_J)] - F* <= floor + rate^J (initial_gap - floor).
struct ErrorBound {
  double floor = 0.0;        // the error the bound settles at as J grows
  double rate = 1.0;         // contraction per update, in [0, 1)
  double initial_gap = 0.0;  // F(w_0) - F*
  double gamma_prime = 1.0;  // 1 for the synchronous rules; 1 - (1 - p0) gamma for the async ones
  std::string theorem;       // "Lemma 1" or "Theorem 3'" (the K-async bound as derived here)
  std::vector<std::string> warnings;  // a condition of the statement the inputs break
};

// Lemma 1 (K-sync) and its K-batch-sync twin: K gradients of `batch` samples each, all at w_j:
//   floor = eta L sigma^2 / (2 c K m),  rate = 1 - eta c   (m = batch; needs eta <= 1/L).
ErrorBound k_sync_error_bound(const ErrorConstants& k, double lr, int K, int batch);

// Theorem 3' (K-async; async is K = 1): as Lemma 1, under the same eta <= 1/L, with c replaced
// by gamma' c, where the stale share (1 - p0) of the K gradients costs gamma of the descent:
//   gamma' = 1 - (1 - p0) gamma   (in [0, 1]; 1 when all are fresh: K = P is Lemma 1 exactly),
//   floor = eta L sigma^2 / (2 c gamma' K m),  rate = 1 - eta gamma' c.
// (The paper's Theorem 3 states gamma' = 1 - gamma + p0/2, which exceeds 1 for p0 > 2 gamma and
// so predicts K-async below K-sync; docs/theory.md says why it is not used.)
ErrorBound k_async_error_bound(const ErrorConstants& k, const Staleness& s, double lr, int K,
                               int batch);

// The bound for `rule` (its kind and K): Lemma 1 for sync, k-sync and k-batch-sync, Theorem 3'
// for async, k-async and k-batch-async (each with its own p0: docs/theory.md).
ErrorBound error_bound(const RuleConfig& rule, const ErrorConstants& k, const Staleness& s,
                       double lr, int batch);

// The bound after `iterations` updates (fractional J allowed: the curve between updates).
double error_after(const ErrorBound& b, double iterations);

// The bound after `seconds` of wallclock when one update takes `seconds_per_iteration` on
// average: error_after(b, seconds / seconds_per_iteration).
double error_at_time(const ErrorBound& b, double seconds, double seconds_per_iteration);

// p0 for k-async (async: K = 1) under memoryless (exponential) delays: right after an update
// the K workers it used restart at w_j and the other P - K are still busy on older w, and each
// of the next K arrivals is, by symmetry, any of the racing workers, so P(fresh) = K / P. Not
// k-batch-async's (a worker there may push several gradients per update): for any rule and
// delay, the Monte Carlo's fresh_fraction (theory/runtime.hpp) is the rule's own.
double k_async_fresh_probability(int K, int P);

// gamma from the drift of w over the mean staleness s: |grad F(w_j) - grad F(w_{j-s})| <=
// L |w_j - w_{j-s}| ~ L eta s |grad F|, so gamma ~ (eta L s)^2, capped at 1 (the theorem needs
// gamma <= 1). A heuristic, not the paper's: docs/theory.md says where it is loose.
double drift_gamma(double lr, double L, double mean_staleness);

}  // namespace stalesgd
