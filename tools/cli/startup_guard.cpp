// StartupGuard's watcher: a signal before training starts ends the process (cli/startup_guard.hpp).
#include "cli/startup_guard.hpp"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>

#include <fmt/format.h>

#include "util/live_line.hpp"

namespace stalesgd::cli {

StartupGuard::StartupGuard(const ScopedInterrupt& interrupt)
    : interrupt_(interrupt), watcher_([this] { watch(); }) {}

void StartupGuard::set_log(logging::RunLog* log) {
  const std::lock_guard lock(mu_);
  log_ = log;
}

void StartupGuard::disarm() {
  {
    const std::lock_guard lock(mu_);  // held by a watcher that is ending the process: for good
    armed_ = false;
  }
  wake_.notify_all();
  if (watcher_.joinable()) watcher_.join();
}

void StartupGuard::watch() {
  std::unique_lock lock(mu_);
  // The flag is set from a signal handler, which can notify nothing: it is polled, every 20 ms
  // (a signal ends the process within that).
  while (armed_) {
    if (interrupt_.flag()->load(std::memory_order_relaxed)) {
      const int code = interrupt_.exit_code();
      const std::string line = fmt::format(
          "interrupted by {} before training started (while the data or the model was loaded "
          "and checked): nothing was trained",
          code == 128 + SIGTERM ? "SIGTERM" : "SIGINT");
      if (log_ != nullptr) log_->record(spdlog::level::warn, line);
      live_line::clear();
      fmt::print(stderr, "stalesgd: {}\n", line);
      std::fflush(stderr);
      // The folder's lock goes with the process; its journal files hold their headers; no
      // summary.json: a run that never trained, which the same command replaces.
      ::_exit(code);
    }
    wake_.wait_for(lock, std::chrono::milliseconds(20));
  }
}

}  // namespace stalesgd::cli
