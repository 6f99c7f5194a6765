// A race's progress lines: the run's place in the race and the race's ETA.
#include "experiment/race_progress.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace stalesgd {

RaceProgress::RaceProgress(const Experiment& experiment, bool to_stderr, double every_s, int jobs)
    : to_stderr_(to_stderr),
      every_s_(every_s),
      jobs_(std::max(1, jobs)),
      runs_(experiment.runs.size()) {
  for (const auto& r : experiment.runs) labels_.push_back(r.label);
}

std::unique_ptr<ProgressReporter> RaceProgress::start(std::size_t i, logging::RunLog* log) {
  {
    std::lock_guard lock(mu_);
    runs_[i].started = true;
  }
  // Several live lines would overwrite each other: with jobs each run logs its lines instead.
  auto p = std::make_unique<ProgressReporter>(to_stderr_, every_s_, log,
                                              /*live_allowed=*/jobs_ == 1);
  p->set_context(fmt::format("[{}/{}] {}", i + 1, labels_.size(), labels_[i]),
                 [this, i](const ProgressSample& s) { return eta_text(i, s); });
  return p;
}

void RaceProgress::finished(std::size_t i, double wall_s) {
  std::lock_guard lock(mu_);
  runs_[i].done = true;
  runs_[i].wall_s = wall_s;
  runs_[i].eta_s.reset();
}

std::string RaceProgress::eta_text(std::size_t i, const ProgressSample& sample) {
  std::lock_guard lock(mu_);
  auto& me = runs_[i];
  me.eta_s = ProgressReporter::eta_s(sample);
  me.total_s = me.eta_s ? std::optional(sample.wall_s + *me.eta_s) : std::nullopt;
  // What one run not started yet will take: the ended runs' mean, else the running ones'.
  double sum = 0.0, count = 0.0;
  for (const auto& r : runs_) {
    if (r.done && r.wall_s > 0.0) sum += r.wall_s, count += 1.0;
  }
  if (count == 0.0) {
    for (const auto& r : runs_) {
      if (!r.done && r.total_s) sum += *r.total_s, count += 1.0;
    }
  }
  if (count == 0.0) return {};
  const double per_run = sum / count;
  double left = 0.0;
  for (const auto& r : runs_) {
    if (r.done) continue;
    if (!r.started) {
      left += per_run;
    } else if (r.eta_s) {
      left += *r.eta_s;
    } else {
      left += per_run;  // a running run without its own estimate yet
    }
  }
  return "race ETA " + ProgressReporter::clock_text(left / jobs_);
}

}  // namespace stalesgd
