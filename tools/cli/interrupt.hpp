// ScopedInterrupt: while alive, Ctrl-C (SIGINT), SIGTERM, SIGHUP, SIGUSR1 or SIGUSR2 sets a flag
// that the engines poll to stop cleanly (write what was recorded, exit 128 + the signal, as a
// shell reports a process the signal ended: 130, 143, 129, 138, 140) instead of killing the
// process. A second signal ends the
// process at once (one line, the same exit code), without writing.
#pragma once

#include <atomic>

namespace stalesgd::cli {

class ScopedInterrupt {
 public:
  // What a second signal does. kIgnored for an MPI rank: a rank may get the same Ctrl-C twice
  // (from the terminal's process group and from mpirun, which passes it on as SIGTERM), and
  // must still write; mpirun's SIGKILL is the hard stop there.
  enum class SecondSignal { kExits, kIgnored };
  explicit ScopedInterrupt(SecondSignal second = SecondSignal::kExits);
  ~ScopedInterrupt();
  ScopedInterrupt(const ScopedInterrupt&) = delete;
  ScopedInterrupt& operator=(const ScopedInterrupt&) = delete;

  // The flag to hand to train() / run_race().
  const std::atomic<bool>* flag() const;
  // For a run the flag stopped: 128 + the first signal received (130 SIGINT, 143 SIGTERM, ...).
  int exit_code() const;
};

}  // namespace stalesgd::cli
