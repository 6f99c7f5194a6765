// Harmonic numbers and expected order statistics of a delay distribution: the pieces of the
// rules' closed forms of E[T] (Dutta et al. 2018, §4; rules/rule_registry.hpp).
#pragma once

#include "stalesgd/straggler/distribution.hpp"

namespace stalesgd {

// H_n = 1 + 1/2 + ... + 1/n (H_0 = 0).
double harmonic(int n);

// E[X_{K:P}], the K-th smallest of P i.i.d. draws of `x`:
// integral_0^1 Q(u) * Beta(u; K, P-K+1) du, evaluated numerically (any distribution with a
// finite mean); exact (H_P - H_{P-K}) * mean + shift for the (shifted) exponential.
double expected_order_statistic(const Distribution& x, int k, int p);

}  // namespace stalesgd
