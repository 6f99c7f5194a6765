// Harmonic numbers and expected order statistics (Dutta et al. 2018, §4: E[X_{K:P}] is the
// runtime of K-sync SGD; for Exp(mu), E[X_{K:P}] = (H_P - H_{P-K}) / mu).
#include <cmath>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "stalesgd/straggler/order_statistics.hpp"

namespace stalesgd {

double harmonic(int n) {
  double h = 0.0;
  for (int i = n; i >= 1; --i) h += 1.0 / i;  // small terms first: less rounding
  return h;
}

double expected_order_statistic(const Distribution& x, int k, int p) {
  if (auto se = x.as_shifted_exponential()) {
    return se->shift_s + (harmonic(p) - harmonic(p - k)) * se->mean_s;
  }
  // E[X_{K:P}] = integral_0^1 Q(u) b(u) du with b the Beta(K, P-K+1) density. Substituting
  // u = (1 - cos(pi s)) / 2 crowds the nodes toward both ends, where Q and b vary fastest;
  // then a composite Simpson rule in s.
  const double log_norm =
      std::lgamma(p + 1.0) - std::lgamma(static_cast<double>(k)) - std::lgamma(p - k + 1.0);
  auto integrand = [&](double s) {
    const double u = 0.5 * (1.0 - std::cos(M_PI * s));
    if (u <= 0.0 || u >= 1.0) return 0.0;
    const double du = 0.5 * M_PI * std::sin(M_PI * s);
    const double log_b = log_norm + (k - 1) * std::log(u) + (p - k) * std::log1p(-u);
    return x.quantile(u) * std::exp(log_b) * du;
  };
  constexpr int kIntervals = 20000;  // even
  const double h = 1.0 / kIntervals;
  double sum = integrand(0.0) + integrand(1.0);
  for (int i = 1; i < kIntervals; ++i) sum += integrand(i * h) * (i % 2 == 1 ? 4.0 : 2.0);
  return sum * h / 3.0;
}

double finish_rate(std::span<const double> times) {
  double rate = 0.0;
  for (const double t : times) rate += 1.0 / t;
  return rate;
}

double kth_finish(std::span<const double> times, long k) {
  // Every worker's next finish in a heap; the k-th pop is the k-th finish.
  using Next = std::pair<double, std::size_t>;
  std::priority_queue<Next, std::vector<Next>, std::greater<>> next;
  for (std::size_t i = 0; i < times.size(); ++i) next.push({times[i], i});
  double t = 0.0;
  for (long n = 0; n < k; ++n) {
    const auto [at, i] = next.top();
    next.pop();
    t = at;
    next.push({at + times[i], i});
  }
  return t;
}

}  // namespace stalesgd
