// ScopedInterrupt: while alive, Ctrl-C (SIGINT) or SIGTERM sets a flag that the engines poll
// to stop cleanly (write what was recorded, exit 130) instead of killing the process.
#pragma once

#include <atomic>

namespace stalesgd::cli {

class ScopedInterrupt {
 public:
  ScopedInterrupt();
  ~ScopedInterrupt();
  ScopedInterrupt(const ScopedInterrupt&) = delete;
  ScopedInterrupt& operator=(const ScopedInterrupt&) = delete;

  // The flag to hand to train() / run_race().
  const std::atomic<bool>* flag() const;
};

}  // namespace stalesgd::cli
