// ProgressSink: how far a run is, reported while it runs. The CLI draws it as a live line on a
// terminal or logs it every --progress-every (docs/cli.md, "Logging and progress"); a race
// adds which run of how many and the race's ETA.
//
// Thread safety: a run calls update() and done() from one thread (its supervisor's), at most
// ten times a second.
#pragma once

#include <cstdint>
#include <optional>

namespace stalesgd {

struct ProgressSample {
  double t_s = 0.0;                  // the run's clock: virtual seconds on the virtual clock
  double wall_s = 0.0;               // wall seconds since the run started
  std::uint64_t iteration = 0;       // server updates so far
  std::optional<double> budget;      // fraction of the budget used: the larger of time and
                                     // iterations; none when only a target error bounds the run
  std::optional<double> test_error;  // the latest evaluated snapshot's
  double mean_staleness = 0.0;
};

class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  virtual void update(const ProgressSample& sample) = 0;
  // The run's training phase ended (its evaluations may still be running).
  virtual void done() {}
};

}  // namespace stalesgd
