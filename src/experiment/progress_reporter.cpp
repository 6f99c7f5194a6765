// The CLI's progress: a live terminal line or periodic log lines, and run.log entries.
#include "experiment/progress_reporter.hpp"

#include <cmath>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "util/live_line.hpp"
#include "util/logging.hpp"

namespace stalesgd {

ProgressReporter::ProgressReporter(bool to_stderr, double every_s, logging::RunLog* log,
                                   bool live_allowed)
    : live_(to_stderr && live_allowed && live_line::on_terminal()),
      log_(to_stderr && !live_),
      log_file_(log),
      every_s_(every_s),
      next_log_s_(every_s) {}

ProgressReporter::~ProgressReporter() {
  clear();
}

void ProgressReporter::set_context(std::string prefix,
                                   std::function<std::string(const ProgressSample&)> suffix) {
  prefix_ = std::move(prefix);
  suffix_ = std::move(suffix);
  next_log_s_ = every_s_;
}

std::string ProgressReporter::clock_text(double seconds) {
  const auto s = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

std::optional<double> ProgressReporter::eta_s(const ProgressSample& s) {
  if (!s.budget || *s.budget < 0.01) return std::nullopt;
  return s.wall_s * (1.0 - *s.budget) / *s.budget;
}

std::string ProgressReporter::describe(const ProgressSample& s) {
  const double rate = s.wall_s > 0.0 ? static_cast<double>(s.iteration) / s.wall_s : 0.0;
  const auto eta = eta_s(s);
  return fmt::format(
      "{}t {:.1f} s  iteration {}  {:.0f} it/s  ETA {}  test error {}  staleness {:.2f}",
      s.budget ? fmt::format("{:.0f}%  ", 100.0 * *s.budget) : std::string(), s.t_s, s.iteration,
      rate, eta ? clock_text(*eta) : std::string("-"),
      s.test_error ? fmt::format("{:.4f}", *s.test_error) : std::string("-"), s.mean_staleness);
}

std::string ProgressReporter::line(const ProgressSample& s) const {
  std::string text = prefix_.empty() ? describe(s) : prefix_ + "  " + describe(s);
  if (suffix_) {
    if (std::string more = suffix_(s); !more.empty()) text += "  " + more;
  }
  return text;
}

void ProgressReporter::update(const ProgressSample& s) {
  if (forward_) forward_(s);
  const bool log_due = s.wall_s >= next_log_s_;
  if (log_due) {
    // Whole periods, so that a late report does not shift the ones after it.
    next_log_s_ = (std::floor(s.wall_s / every_s_) + 1.0) * every_s_;
    const std::string text = "progress " + line(s);
    if (log_ && !forward_) {
      // stderr, and run.log when there is one
      if (log_file_ != nullptr) {
        log_file_->logger()->info(text);
      } else {
        spdlog::info(text);
      }
    } else if (log_file_ != nullptr) {
      log_file_->record(spdlog::level::info, text);
    }
  }
  if (!live_ || forward_) return;
  const auto now = Clock::now();
  if (drawn_ && now < next_draw_) return;
  next_draw_ = now + std::chrono::milliseconds(500);
  drawn_ = true;
  live_line::show(line(s));
}

void ProgressReporter::done() {
  clear();
}

void ProgressReporter::clear() {
  if (!drawn_) return;
  live_line::clear();
  drawn_ = false;
}

}  // namespace stalesgd
