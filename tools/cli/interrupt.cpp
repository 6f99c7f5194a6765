#include "cli/interrupt.hpp"

#include <unistd.h>

#include <csignal>
#include <iterator>

namespace stalesgd::cli {
namespace {

// Lock-free, so storing to it is async-signal-safe.
std::atomic<bool> g_interrupt{false};
std::atomic<int> g_signal{0};  // the first signal that set g_interrupt
std::atomic<bool> g_second_exits{true};
static_assert(std::atomic<bool>::is_always_lock_free);
static_assert(std::atomic<int>::is_always_lock_free);
// The signals that stop a run cleanly. Each one's default action ends the process with nothing
// written (docs/reliability.md): SIGINT (Ctrl-C), SIGTERM (`kill`, a batch system, mpirun passing
// on a Ctrl-C), SIGHUP (the terminal or the ssh session closed), SIGUSR1 and SIGUSR2 (a batch
// system's warning before its time limit: Slurm's --signal, mpirun passes them on).
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
struct sigaction g_previous[std::size(kStopSignals)]{};

extern "C" void on_signal(int signal) {
  int none = 0;
  if (!g_signal.compare_exchange_strong(none, signal, std::memory_order_relaxed) &&
      g_second_exits.load(std::memory_order_relaxed)) {
    // A second signal: the user insists (the first one's writing takes too long, say). Only
    // async-signal-safe calls here. Outputs are renamed into place when complete, so none is
    // left half-written.
    constexpr char kLine[] = "stalesgd: second signal: stopped without writing the outputs\n";
    [[maybe_unused]] const auto n = write(STDERR_FILENO, kLine, sizeof kLine - 1);
    _exit(128 + signal);
  }
  g_interrupt.store(true, std::memory_order_relaxed);
}

}  // namespace

ScopedInterrupt::ScopedInterrupt(SecondSignal second) {
  g_interrupt.store(false);
  g_signal.store(0);
  g_second_exits.store(second == SecondSignal::kExits);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  // SA_RESTART: the engines poll the flag, nothing waits for EINTR, and a system call cut short
  // inside a library (Open MPI's and PMIx's socket reads, say) must not fail because of it.
  sa.sa_flags = SA_RESTART;
  for (std::size_t i = 0; i < std::size(kStopSignals); ++i) {
    const int signal = kStopSignals[i];
    sigaction(signal, nullptr, &g_previous[i]);
    // A signal the parent set to be ignored stays ignored, but for SIGINT and SIGTERM: `nohup`
    // keeps a run going when the terminal closes; a shell's background job, which ignores
    // SIGINT, still stops cleanly on `kill -INT`.
    if (signal != SIGINT && signal != SIGTERM && g_previous[i].sa_handler == SIG_IGN) continue;
    sigaction(signal, &sa, nullptr);
  }
}

ScopedInterrupt::~ScopedInterrupt() {
  for (std::size_t i = 0; i < std::size(kStopSignals); ++i) {
    sigaction(kStopSignals[i], &g_previous[i], nullptr);
  }
}

const std::atomic<bool>* ScopedInterrupt::flag() const {
  return &g_interrupt;
}

int ScopedInterrupt::exit_code() const {
  const int signal = g_signal.load(std::memory_order_relaxed);
  return 128 + (signal != 0 ? signal : SIGINT);
}

}  // namespace stalesgd::cli
