// Harmonic numbers and expected order statistics of a delay distribution: the pieces of the
// rules' closed forms of E[T] (Dutta et al. 2018, §4; rules/rule_registry.hpp).
#pragma once

#include <span>

#include "stalesgd/straggler/distribution.hpp"

namespace stalesgd {

// H_n = 1 + 1/2 + ... + 1/n (H_0 = 0).
double harmonic(int n);

// E[X_{K:P}], the K-th smallest of P i.i.d. draws of `x`:
// integral_0^1 Q(u) * Beta(u; K, P-K+1) du, evaluated numerically (any distribution with a
// finite mean); exact (H_P - H_{P-K}) * mean + shift for the (shifted) exponential.
double expected_order_statistic(const Distribution& x, int k, int p);

// Fixed per-worker times (worker i's every minibatch takes times[i]), all starting at 0 and each
// starting again as it finishes: the time of the k-th finish counted over all workers, a fast
// worker's repeats included (k >= 1; every time > 0).
double kth_finish(std::span<const double> times, long k);
// The same workers' finishes per second in the long run, sum_i 1 / times[i] (infinity when a
// time is 0).
double finish_rate(std::span<const double> times);

}  // namespace stalesgd
