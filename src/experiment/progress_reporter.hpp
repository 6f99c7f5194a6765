// ProgressReporter: the CLI's ProgressSink (docs/cli.md, "Logging and progress"). On a terminal
// (also one that mpirun's pipe reaches: live_line::on_terminal) a live line on stderr, redrawn at
// most twice a second: % of the budget, the run's clock, iterations and iterations/s, ETA, test
// error, staleness. Off a terminal (nohup, Slurm, a pipe) the same text as a log line every
// --progress-every. run.log gets a line every
// --progress-every either way.
//
// Thread safety: one run's supervisor thread calls update() and done(); set_context() only
// between runs (a race sets it before each run).
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "stalesgd/engine/progress.hpp"
#include "util/logging.hpp"

namespace stalesgd {

class ProgressReporter : public ProgressSink {
 public:
  using Clock = std::chrono::steady_clock;
  // `to_stderr`: progress on stderr at all (off with --no-progress or -q). `every_s`: seconds
  // between log lines.
  // `live_allowed`: a terminal gets the live line (a race running several runs at once logs
  // lines instead).
  ProgressReporter(bool to_stderr, double every_s, logging::RunLog* log = nullptr,
                   bool live_allowed = true);
  ~ProgressReporter() override;

  // What a race adds: a prefix ("[2/6] k-async K=4") and text after the run's own ("race ETA
  // 3:10"), computed from the sample.
  void set_context(std::string prefix, std::function<std::string(const ProgressSample&)> suffix);
  // The run.log the lines also go to (a race sets each run's); may be null.
  void set_log(logging::RunLog* log) { log_file_ = log; }
  // Hands every sample to `to` instead of drawing a live line or logging on stderr (run.log
  // still gets its lines): race --jobs on a terminal draws one line for all its running runs.
  void forward_to(std::function<void(const ProgressSample&)> to) { forward_ = std::move(to); }

  void update(const ProgressSample& sample) override;
  void done() override;

  // The text of one progress report, without prefix and suffix: for tests and the race.
  static std::string describe(const ProgressSample& sample);
  // The wall seconds left, estimated from the fraction of the budget used so far; none before
  // 1% of it or without a budget.
  static std::optional<double> eta_s(const ProgressSample& sample);
  // "0:07", "12:34", "3:02:10".
  static std::string clock_text(double seconds);

 private:
  std::string line(const ProgressSample& sample) const;
  void clear();

  bool live_;  // a terminal: redraw a line in place
  bool log_;   // not a terminal: log lines on stderr
  logging::RunLog* log_file_;
  double every_s_;
  std::string prefix_;
  std::function<std::string(const ProgressSample&)> suffix_;
  std::function<void(const ProgressSample&)> forward_;
  bool drawn_ = false;
  Clock::time_point next_draw_{};
  double next_log_s_;  // wall seconds of the run at which the next log line is due
};

}  // namespace stalesgd
