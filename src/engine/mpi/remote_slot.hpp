// RemoteSlot: what a worker rank's receive thread and one of its worker threads share — the
// minibatch rank 0 assigned (ticket, version, X, parameters), the ticket the worker is on, and
// the cancel and stop flags. The receive thread only delivers what rank 0 decided; the worker
// takes, sleeps, computes and pushes.
//
// Thread safety: the fields marked GUARDED_BY(mu) are read and written under `mu` only.
// `cancel` is set under `mu` too (and notified); the model also polls it lock-free between
// layers. The fields below "Owned by the worker thread" are its alone until it is joined.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "engine/mpi/wire.hpp"
#include "engine/worker_slot.hpp"
#include "stalesgd/metrics/records.hpp"

namespace stalesgd::mpi {

// alignas(64): slots sit in one array and are written by different threads; a cache line each
// keeps them from false sharing.
struct alignas(64) RemoteSlot {
  std::mutex mu;
  std::condition_variable cv;
  // The assignment not yet taken, as received (header and parameters): a newer one replaces
  // it (the receive buffer is swapped in, not copied).
  Packet assigned;                      // GUARDED_BY(mu)
  Header assigned_header;               // GUARDED_BY(mu)
  EngineClock::time_point assigned_at;  // GUARDED_BY(mu): when rank 0 assigned it, our clock
  bool has_assignment = false;          // GUARDED_BY(mu)
  std::uint64_t running = 0;            // GUARDED_BY(mu): the ticket in flight; 0: none
  // GUARDED_BY(mu): the newest ticket cut. An assignment's parameters may arrive after the cancel
  // that cuts it (a large message completes after a small one sent later); it is dropped then.
  std::uint64_t cut_through = 0;
  bool stop = false;  // GUARDED_BY(mu)
  // Interrupts the minibatch in flight. Relaxed suffices: it carries no data, only "stop
  // early"; the mutex orders it against its reset when the worker takes the next assignment.
  std::atomic<bool> cancel{false};

  // Owned by the worker thread.
  WorkerRecord stats;  // computed, busy, idle (the counts are rank 0's)
};

}  // namespace stalesgd::mpi
