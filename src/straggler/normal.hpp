// The standard normal cdf and its inverse, for the lognormal family.
#pragma once

namespace stalesgd::straggler {

// Phi(z) = erfc(-z / sqrt 2) / 2.
double normal_cdf(double z);
// Phi^-1(p) for p in [0, 1] (-inf at 0, +inf at 1), accurate to a few ulps: Acklam's rational
// approximation (relative error < 1.15e-9) refined by one Halley step on Phi.
double normal_quantile(double p);

}  // namespace stalesgd::straggler
