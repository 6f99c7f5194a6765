// A race's progress lines: the run's place in the race and the race's ETA.
#include "experiment/race_progress.hpp"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "util/live_line.hpp"

namespace stalesgd {

RaceProgress::RaceProgress(const Experiment& experiment, bool to_stderr, double every_s, int jobs)
    : to_stderr_(to_stderr),
      every_s_(every_s),
      jobs_(std::max(1, jobs)),
      shared_(to_stderr && jobs_ > 1 && isatty(STDERR_FILENO) != 0),
      runs_(experiment.runs.size()) {
  for (const auto& r : experiment.runs) labels_.push_back(r.label);
}

RaceProgress::~RaceProgress() {
  if (shared_) live_line::clear();
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
  if (shared_) p->forward_to([this, i](const ProgressSample& s) { on_sample(i, s); });
  return p;
}

void RaceProgress::finished(std::size_t i, double wall_s) {
  std::lock_guard lock(mu_);
  runs_[i].done = true;
  runs_[i].wall_s = wall_s;
  runs_[i].eta_s.reset();
  runs_[i].last.reset();
  if (shared_) redraw_locked();
}

std::string RaceProgress::eta_text(std::size_t i, const ProgressSample& sample) {
  std::lock_guard lock(mu_);
  const auto left = note_locked(i, sample);
  return left ? "race ETA " + ProgressReporter::clock_text(*left) : std::string();
}

void RaceProgress::on_sample(std::size_t i, const ProgressSample& sample) {
  std::lock_guard lock(mu_);
  runs_[i].last = sample;
  left_s_ = note_locked(i, sample);
  // At most twice a second, as a run's own line.
  const auto now = Clock::now();
  if (now < next_draw_) return;
  next_draw_ = now + std::chrono::milliseconds(500);
  redraw_locked();
}

void RaceProgress::redraw_locked() {
  bool going = false;
  for (const auto& r : runs_) going = going || (r.started && !r.done);
  if (going) {
    live_line::show(shared_line_locked());
  } else {
    live_line::clear();
  }
}

std::string RaceProgress::shared_line_locked() const {
  std::size_t done = 0;
  for (const auto& r : runs_) done += r.done ? 1 : 0;
  std::string text = fmt::format("[{}/{} done", done, runs_.size());
  if (left_s_) text += ", race ETA " + ProgressReporter::clock_text(*left_s_);
  text += "]";
  for (std::size_t i = 0; i < runs_.size(); ++i) {
    const auto& r = runs_[i];
    if (!r.started || r.done) continue;
    text += "  " + labels_[i];
    if (r.last && r.last->budget) {
      text += fmt::format(" {:.0f}%", 100.0 * *r.last->budget);
    } else if (r.last) {
      text += fmt::format(" {:.1f} s", r.last->t_s);
    }
  }
  return text;
}

std::optional<double> RaceProgress::note_locked(std::size_t i, const ProgressSample& sample) {
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
  if (count == 0.0) return std::nullopt;
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
  return left / jobs_;
}

}  // namespace stalesgd
