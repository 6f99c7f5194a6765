#include "stalesgd/data/dataset.hpp"

#include <cmath>

namespace stalesgd {

SplitStats compute_stats(const Split& split, int num_classes) {
  SplitStats stats;
  stats.class_counts.assign(static_cast<std::size_t>(num_classes), 0);
  for (auto label : split.labels) ++stats.class_counts[label];
  // Two-pass in double: the mean over 47M pixels would lose digits in a float running sum.
  double sum = 0.0;
  for (float v : split.features) sum += v;
  const double n = static_cast<double>(split.features.size());
  stats.pixel_mean = n > 0 ? sum / n : 0.0;
  double sq = 0.0;
  for (float v : split.features) sq += (v - stats.pixel_mean) * (v - stats.pixel_mean);
  stats.pixel_std = n > 0 ? std::sqrt(sq / n) : 0.0;
  return stats;
}

}  // namespace stalesgd
