// `race --only PATTERN`: a race of some of a file's runs, chosen by shell patterns.
#include <fnmatch.h>

#include <algorithm>
#include <iterator>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "stalesgd/experiment/experiment.hpp"

namespace stalesgd {

Status select_runs(Experiment& ex, const std::vector<std::string>& patterns) {
  if (patterns.empty()) return {};
  const auto matches = [&](const ExperimentRun& r) {
    return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) {
      return fnmatch(p.c_str(), r.label.c_str(), 0) == 0 ||
             fnmatch(p.c_str(), r.slug.c_str(), 0) == 0;
    });
  };
  std::vector<ExperimentRun> kept;
  std::copy_if(ex.runs.begin(), ex.runs.end(), std::back_inserter(kept), matches);
  if (kept.empty()) {
    std::vector<std::string> labels;
    for (const auto& r : ex.runs) labels.push_back("'" + r.label + "'");
    return Error{fmt::format("--only {}: no run's label or slug matches; the labels: {}",
                             fmt::join(patterns, " --only "), fmt::join(labels, ", "))};
  }
  ex.runs = std::move(kept);
  return {};
}

}  // namespace stalesgd
