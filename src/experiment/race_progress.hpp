// RaceProgress: how far a race is (docs/cli.md, "Logging and progress"). Each run gets a
// ProgressReporter whose line starts with "[i/n] label" and ends with the race's ETA: the run's
// own ETA, plus the runs not started yet at the mean wall time of the runs that ended (or,
// before any ended, at the running runs' projected length), shared among the jobs.
//
// With --jobs on a terminal the runs draw no line of their own: one live line shows the runs
// going, each with its share of its budget, the runs done and the race's ETA.
//
// Thread safety: with race --jobs several runs report at once; every member may be called from
// any thread (one mutex, taken before the live line's).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "experiment/progress_reporter.hpp"
#include "stalesgd/experiment/experiment.hpp"
#include "util/logging.hpp"

namespace stalesgd {

class RaceProgress {
 public:
  using Clock = std::chrono::steady_clock;
  // `to_stderr`: progress on stderr (not with --no-progress or -q); `jobs`: runs at a time.
  RaceProgress(const Experiment& experiment, bool to_stderr, double every_s, int jobs);
  ~RaceProgress();
  RaceProgress(const RaceProgress&) = delete;
  RaceProgress& operator=(const RaceProgress&) = delete;

  // Run i starts: its reporter, writing to `log` (its run.log; may be null). With several runs
  // at a time, off a terminal each logs its lines; on one they share the race's line.
  std::unique_ptr<ProgressReporter> start(std::size_t i, logging::RunLog* log);
  // Run i ended (or was kept from an earlier race: `wall_s` 0 does not count as an estimate).
  void finished(std::size_t i, double wall_s);

  // "race ETA 3:10" for a sample of run i; empty until there is an estimate.
  std::string eta_text(std::size_t i, const ProgressSample& sample);

 private:
  struct RunState {
    bool started = false;
    bool done = false;
    std::optional<double> eta_s;         // the running run's own
    std::optional<double> total_s;       // its projected wall length
    double wall_s = 0.0;                 // an ended run's
    std::optional<ProgressSample> last;  // the latest sample of a running run
  };
  // Takes run i's sample into the ETA; the race's seconds left, if known.
  std::optional<double> note_locked(std::size_t i, const ProgressSample& sample);
  // The shared line: "[2/6 done, race ETA 3:10]  k-async 45%  sync 12%" (runs going, in order).
  std::string shared_line_locked() const;
  void on_sample(std::size_t i, const ProgressSample& sample);
  void redraw_locked();
  std::vector<std::string> labels_;
  bool to_stderr_;
  double every_s_;
  int jobs_;
  bool shared_;  // one live line for every running run (jobs > 1, stderr a terminal)
  std::mutex mu_;
  std::optional<double> left_s_;   // GUARDED_BY(mu_): the race's ETA at the latest sample
  Clock::time_point next_draw_{};  // GUARDED_BY(mu_)
  std::vector<RunState> runs_;     // GUARDED_BY(mu_)
};

}  // namespace stalesgd
