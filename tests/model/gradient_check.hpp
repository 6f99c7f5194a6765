// Central finite differences for the gradient checks of tests/model: compares an analytic
// gradient with (f(x + h e_i) - f(x - h e_i)) / 2h on a random subset of coordinates.
// The models compute in float, so the criterion is relative with an absolute floor scaled to the
// gradient. For piecewise-smooth f (ReLU, max pooling), coordinates where f visibly bends within
// +-h (the one-sided slopes disagree by more than the tolerance: a unit switched on or off) are
// skipped and counted rather than compared; smooth f (softmax regression) skips nothing.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <string>

#include <fmt/format.h>

namespace stalesgd::test {

struct GradCheck {
  int checked = 0;     // coordinates compared
  int kinks = 0;       // coordinates skipped as non-smooth
  int failures = 0;    // coordinates outside the tolerance
  double worst = 0.0;  // largest |g - fd| / (rtol-scaled bound), failures have > 1
  std::string first_failure;
};

struct GradCheckOptions {
  int coords = 40;     // how many coordinates to probe (all of them if fewer)
  float h = 1e-2f;     // step
  double rtol = 2e-2;  // relative tolerance
  double atol = 2e-3;  // absolute floor, times max |g|
  std::uint64_t seed = 7;
  bool smooth = false;  // f is smooth: compare every coordinate, never skip
};

// `f` returns the function value (double) at the current contents of `x`; `g` is the analytic
// gradient at the original x. x is restored before returning.
template <class F>
GradCheck check_gradient(std::span<float> x, std::span<const float> g, F&& f,
                         GradCheckOptions opt = {}) {
  GradCheck out;
  double gmax = 0.0;
  for (float v : g) gmax = std::max(gmax, static_cast<double>(std::fabs(v)));
  const double floor = opt.atol * std::max(gmax, 1e-6);
  std::mt19937_64 rng(opt.seed);
  const std::size_t n = x.size();
  const int coords = static_cast<int>(std::min<std::size_t>(opt.coords, n));
  const double f0 = f();
  for (int t = 0; t < coords; ++t) {
    const std::size_t i = coords == static_cast<int>(n) ? static_cast<std::size_t>(t) : rng() % n;
    const float orig = x[i];
    x[i] = orig + opt.h;
    const double fp = f();
    x[i] = orig - opt.h;
    const double fm = f();
    x[i] = orig;
    const double h = opt.h;
    const double up = (fp - f0) / h;
    const double down = (f0 - fm) / h;
    if (!opt.smooth &&
        std::fabs(up - down) > opt.rtol * std::max(std::fabs(up), std::fabs(down)) + floor) {
      ++out.kinks;
      continue;
    }
    const double fd = (fp - fm) / (2.0 * h);
    const double bound =
        opt.rtol * std::max(std::fabs(fd), static_cast<double>(std::fabs(g[i]))) + floor;
    const double ratio = std::fabs(fd - g[i]) / bound;
    out.worst = std::max(out.worst, ratio);
    ++out.checked;
    if (ratio > 1.0) {
      if (out.failures++ == 0) {
        out.first_failure =
            fmt::format("coordinate {}: analytic {:.6g}, finite difference {:.6g}", i, g[i], fd);
      }
    }
  }
  return out;
}

}  // namespace stalesgd::test
