#include "cli/interrupt.hpp"

#include <csignal>

namespace stalesgd::cli {
namespace {

// Lock-free, so storing to it is async-signal-safe.
std::atomic<bool> g_interrupt{false};
static_assert(std::atomic<bool>::is_always_lock_free);
struct sigaction g_previous {};

extern "C" void on_sigint(int) {
  g_interrupt.store(true, std::memory_order_relaxed);
}

}  // namespace

ScopedInterrupt::ScopedInterrupt() {
  g_interrupt.store(false);
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_previous);
}

ScopedInterrupt::~ScopedInterrupt() {
  sigaction(SIGINT, &g_previous, nullptr);
}

const std::atomic<bool>* ScopedInterrupt::flag() const {
  return &g_interrupt;
}

}  // namespace stalesgd::cli
