// StartupGuard: a signal while `stalesgd train` reads its data or loads and checks its model
// ends the process at once (docs/reliability.md). Those steps poll no flag (a TorchScript
// module's load and probe run inside LibTorch for seconds), and nothing has been trained, so
// there is nothing to stop cleanly: while the guard is armed, a thread that sees ScopedInterrupt's
// flag logs one line to run.log, prints it and exits 128 + the signal.
//
// Thread safety: the constructor, set_log() and disarm() from the thread that runs the command;
// the watcher thread is the guard's own.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "cli/interrupt.hpp"
#include "util/logging.hpp"

namespace stalesgd::cli {

class StartupGuard {
 public:
  explicit StartupGuard(const ScopedInterrupt& interrupt);
  ~StartupGuard() { disarm(); }
  StartupGuard(const StartupGuard&) = delete;
  StartupGuard& operator=(const StartupGuard&) = delete;

  // The run.log the line also goes to, once the folder is open.
  void set_log(logging::RunLog* log);
  // Training starts: from here the engines poll the flag and stop cleanly. Blocks for good if
  // the watcher is already ending the process.
  void disarm();

 private:
  void watch();

  const ScopedInterrupt& interrupt_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool armed_ = true;               // guarded by mu_
  logging::RunLog* log_ = nullptr;  // guarded by mu_
  std::thread watcher_;
};

}  // namespace stalesgd::cli
