// ProgressLine: a one-line status on stderr, redrawn in place at most twice a second, only
// when stderr is a terminal (logs and pipes stay clean).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace stalesgd {

class ProgressLine {
 public:
  explicit ProgressLine(bool enabled);
  ~ProgressLine();
  void update(double elapsed_s, std::uint64_t iteration, std::optional<double> test_error,
              double mean_staleness);
  void clear();

 private:
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace stalesgd
