// The real-thread engine's failed workers (docs/rules.md, "Failed workers"): a worker made to
// crash or hang. Retiring it, and finding a hung one, are the LockedServer's.
#include "engine/thread_engine.hpp"

namespace stalesgd {

void ThreadEngine::fail_worker(int w, FailureKind how, EngineClock::time_point at) {
  WorkerSlot& slot = slots_[static_cast<std::size_t>(w)];
  slot.pin.release();  // a failed worker holds no version
  if (how == FailureKind::kHang) {
    // It stops responding: no gradient, no word to the server, until the run ends.
    std::unique_lock lock(slot.mu);
    slot.cv.wait(lock, [&] { return slot.stop; });
    return;
  }
  // A crash: the thread ends (the process does not), and the server hears of it at once, as
  // it would from a dropped connection.
  if (o_.server == ServerPlacement::kThread) {
    pushes_.push(Push{w, 0, 0.0f, at, {}, true});
    return;
  }
  std::lock_guard lock(server_.mutex());
  server_.retire(w, at, FailureKind::kCrash);
}

}  // namespace stalesgd
