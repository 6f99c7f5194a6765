// WorkerSlot: what the real-thread engine's server and one worker thread share — the minibatch
// the server assigned (a pinned version, when, its delay X), whether the worker may take it,
// and the cancel and stop flags. The server is the authority on what every worker does: it
// assigns, releases and cuts; the worker takes, computes, waits out X and delivers.
//
// Thread safety: the fields marked GUARDED_BY(mu) are read and written under `mu` only; the
// server writes them while also holding the server lock. The fields below "Owned by the worker
// thread" are its alone (the server reads `grad` and `pin` only while the worker waits for its
// next assignment, see ThreadEngine::serve).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "engine/parameter_store.hpp"
#include "engine/running_mean.hpp"
#include "stalesgd/metrics/records.hpp"
#include "stalesgd/straggler/delay_mode.hpp"

namespace stalesgd {

using EngineClock = std::chrono::steady_clock;

inline EngineClock::duration to_duration(double s) {
  return std::chrono::duration_cast<EngineClock::duration>(std::chrono::duration<double>(s));
}

// When a minibatch assigned at `at` with delay x starts its gradient: in pad mode `lead_s`
// before X (at once while the worker has no estimate, lead_s < 0), in add mode at X.
inline EngineClock::time_point compute_from(DelayMode mode, EngineClock::time_point at,
                                            EngineClock::duration x, double lead_s) {
  if (mode == DelayMode::kAdd) return at + x;
  return lead_s < 0.0 ? at : at + x - to_duration(lead_s);
}

// alignas(64): slots sit in one array and are written by different threads; a cache line each
// keeps them from false sharing.
struct alignas(64) WorkerSlot {
  std::mutex mu;
  std::condition_variable cv;
  // The minibatch the server assigned: a pinned version, when it was assigned, its delay X.
  ParameterStore::Pin assigned;         // GUARDED_BY(mu)
  EngineClock::time_point assigned_at;  // GUARDED_BY(mu)
  EngineClock::duration assigned_x{};   // GUARDED_BY(mu)
  bool has_assignment = false;          // GUARDED_BY(mu): assigned, not yet taken by the worker
  // The worker may take the assignment: at once when it owns its wake-up, else when the
  // server's WakeTimer fires `ticket`. Every assignment gets a new ticket, so a firing, or a
  // delivery, that belongs to an older minibatch is recognised and ignored.
  bool released = false;                // GUARDED_BY(mu)
  std::uint64_t ticket = 0;             // GUARDED_BY(mu)
  EngineClock::time_point release_aim;  // GUARDED_BY(mu): when the timer was asked to release it
  bool release_timed = false;           // GUARDED_BY(mu): the release waited for the timer
  RunningMean release_late;             // GUARDED_BY(mu): how late releases reach the worker
  double lead_s = -1.0;  // GUARDED_BY(mu): pad: wake this long before X (-1: unknown)
  // GUARDED_BY(mu): when the minibatch's X ends, or its release if the server held it back
  // past that; the watch for hung workers adds the gradient time and --worker-timeout.
  EngineClock::time_point due;
  EngineClock::time_point busy_since;  // GUARDED_BY(mu): first assignment since the last take
  bool stop = false;                   // GUARDED_BY(mu)
  // Set by the server under `mu` (and notified) to interrupt the minibatch in flight; the model
  // polls it between layers. Relaxed loads suffice: it carries no data, only "stop early"; the
  // mutex orders it against the reset when the worker takes its next assignment.
  std::atomic<bool> cancel{false};

  // Computed, busy, idle (the counts are the server's): written by the worker thread under
  // `mu`, so that a checkpoint can read them while the worker runs.
  WorkerRecord stats;  // GUARDED_BY(mu)

  // Owned by the worker thread.
  std::vector<float> grad;
  ParameterStore::Pin pin;
  std::uint64_t taken_ticket = 0;  // the ticket of the minibatch it computes
};

}  // namespace stalesgd
