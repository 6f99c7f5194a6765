#include "stalesgd/metrics/records.hpp"

#include <algorithm>
#include <cmath>

namespace stalesgd {

const char* to_string(StopReason reason) {
  switch (reason) {
    case StopReason::kNone:
      return "none";
    case StopReason::kIterations:
      return "iterations";
    case StopReason::kTime:
      return "time";
    case StopReason::kTargetError:
      return "target-error";
    case StopReason::kInterrupted:
      return "interrupted";
    case StopReason::kDiverged:
      return "diverged";
    case StopReason::kFailed:
      return "failed";
    case StopReason::kWorkersFailed:
      return "workers-failed";
    case StopReason::kStalled:
      return "stalled";
  }
  return "?";
}

StalenessStats staleness_stats(const RunRecord& run) {
  StalenessStats s;
  if (run.gradients.empty()) return s;
  std::vector<std::uint64_t> v;
  v.reserve(run.gradients.size());
  double sum = 0.0;
  for (const auto& g : run.gradients) {
    v.push_back(g.staleness);
    sum += static_cast<double>(g.staleness);
  }
  s.mean = sum / static_cast<double>(v.size());
  // Nearest-rank p95.
  const std::size_t rank =
      static_cast<std::size_t>(std::ceil(0.95 * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(rank - 1), v.end());
  s.p95 = static_cast<double>(v[rank - 1]);
  s.max = *std::max_element(v.begin(), v.end());
  return s;
}

GradientTotals gradient_totals(const RunRecord& run) {
  GradientTotals t;
  for (const auto& w : run.workers) {
    t.started += w.started;
    t.computed += w.computed;
    t.pushed += w.pushed;
    t.applied += w.applied;
    t.cancelled += w.cancelled;
  }
  return t;
}

double seconds_per_iteration(const RunRecord& run) {
  if (run.updates.empty()) return 0.0;
  const auto& last = run.updates.back();
  return last.wall_s / static_cast<double>(last.iteration);
}

}  // namespace stalesgd
