#include "engine/progress.hpp"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

namespace stalesgd {

ProgressLine::ProgressLine(bool enabled) : enabled_(enabled && isatty(STDERR_FILENO) != 0) {}

ProgressLine::~ProgressLine() {
  clear();
}

void ProgressLine::update(double elapsed_s, std::uint64_t iteration,
                          std::optional<double> test_error, double mean_staleness) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_ < std::chrono::milliseconds(500)) return;
  last_ = now;
  drawn_ = true;
  const std::string err = test_error ? fmt::format("{:.4f}", *test_error) : std::string("-");
  fmt::print(stderr, "\r\033[K{:8.1f} s  iteration {:>9}  test error {}  staleness {:.2f}",
             elapsed_s, iteration, err, mean_staleness);
  std::fflush(stderr);
}

void ProgressLine::clear() {
  if (!drawn_) return;
  fmt::print(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace stalesgd
