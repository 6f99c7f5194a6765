// RaceProgress: how far a race is (docs/cli.md, "Logging and progress"). Each run gets a
// ProgressReporter whose line starts with "[i/n] label" and ends with the race's ETA: the run's
// own ETA, plus the runs not started yet at the mean wall time of the runs that ended (or,
// before any ended, at the running runs' projected length), shared among the jobs.
//
// Thread safety: with race --jobs several runs report at once; every member may be called from
// any thread (one mutex).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "output/progress_reporter.hpp"
#include "stalesgd/experiment/experiment.hpp"
#include "util/logging.hpp"

namespace stalesgd {

class RaceProgress {
 public:
  using Clock = std::chrono::steady_clock;
  // `to_stderr`: progress on stderr (not with --no-progress or -q); `jobs`: runs at a time.
  RaceProgress(const Experiment& experiment, bool to_stderr, double every_s, int jobs);

  // Run i starts: its reporter, writing to `log` (its run.log; may be null). A live terminal
  // line only when runs go one at a time: with several, each logs its lines.
  std::unique_ptr<ProgressReporter> start(std::size_t i, logging::RunLog* log);
  // Run i ended (or was kept from an earlier race: `wall_s` 0 does not count as an estimate).
  void finished(std::size_t i, double wall_s);

  // "race ETA 3:10" for a sample of run i; empty until there is an estimate.
  std::string eta_text(std::size_t i, const ProgressSample& sample);

 private:
  struct RunState {
    bool started = false;
    bool done = false;
    std::optional<double> eta_s;    // the running run's own
    std::optional<double> total_s;  // its projected wall length
    double wall_s = 0.0;            // an ended run's
  };
  std::vector<std::string> labels_;
  bool to_stderr_;
  double every_s_;
  int jobs_;
  std::mutex mu_;
  std::vector<RunState> runs_;  // GUARDED_BY(mu_)
};

}  // namespace stalesgd
