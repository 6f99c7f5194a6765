// ParameterStore: the server's versioned parameters. The server writes w_{j+1} into a free
// buffer and publishes it; workers pin the current version and read it in place, so a worker
// never sees a half-updated vector and never copies the parameters. A pinned buffer stays alive
// until released, which also keeps w_tau(j) available to the server for the staleness-aware
// learning rate. Buffers are recycled: the server takes a new one only when every buffer but
// the current is pinned, so it holds at most 2 + the most pins held and acquire() calls in
// progress at an update; with P workers that each release before they acquire again, P + 2
// (each worker's one pin, the current and the one being written).
//
// Thread safety: acquire() and buffers() may be called from any thread, and a Pin used and
// released on any thread (one thread per Pin at a time); acquire() and Pin::release() take no
// lock (atomics only, orders argued at the members). begin_update(),
// publish(), current() and version() are for the single writer, the server: one thread at a
// time (the server thread, or whoever holds the server lock).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace stalesgd {

class ParameterStore {
 public:
  // The most buffers a store can hold; enough for the P + 2 of the largest run (4096 workers).
  static constexpr std::size_t kDefaultMaxSlots = 4096 + 2;

  // `max_slots` (at least 2) bounds the buffers; begin_update() throws std::length_error when
  // all of them are pinned. Only the initial buffer is allocated here, the others on first use.
  explicit ParameterStore(std::span<const float> initial, std::size_t max_slots = kDefaultMaxSlots);
  ParameterStore(const ParameterStore&) = delete;
  ParameterStore& operator=(const ParameterStore&) = delete;

  // A pinned version: its buffer is not reused while the Pin lives. An empty (default or
  // moved-from) Pin holds nothing; after release() the server may overwrite params().
  class Pin {
   public:
    Pin() = default;
    Pin(Pin&& other) noexcept { *this = std::move(other); }
    Pin& operator=(Pin&& other) noexcept;
    ~Pin() { release(); }
    void release();
    std::uint64_t version() const { return version_; }
    std::span<const float> params() const { return params_; }
    bool held() const { return pins_ != nullptr; }
    // Another pin on the same buffer (any thread holding this one).
    Pin share() const;

   private:
    friend class ParameterStore;
    std::atomic<int>* pins_ = nullptr;  // the pinned slot's count; null when empty
    std::uint64_t version_ = 0;
    std::span<const float> params_;
  };

  // Pins the current version. Lock-free: retries only if the server published meanwhile.
  Pin acquire();

  // Server: a buffer no one reads (not current, no pins), to write the next version into.
  std::span<float> begin_update();
  // Server: makes the buffer from begin_update() current; version + 1.
  void publish();
  // Server: the current parameters (the server is the only writer, so no pin is needed).
  std::span<const float> current() const;
  std::uint64_t version() const { return version_; }
  // Server, before any reader exists (a run resumed from a checkpoint): the current version
  // becomes `version` with `params`, and buffers up to `buffers` are allocated, as the
  // checkpointed run had them.
  void restore(std::uint64_t version, std::span<const float> params, std::size_t buffers);
  // Server, same time: pins a copy of an older version (a virtual-clock worker's minibatch in
  // flight). A size or buffer count that does not fit throws std::length_error.
  Pin adopt(std::uint64_t version, std::span<const float> params);

  // Buffers ever allocated (memory held = this x num_params floats).
  std::size_t buffers() const { return allocated_.load(std::memory_order_relaxed); }

 private:
  // Own cache line each: readers hammer the current slot's pin count, the server writes the
  // next slot's version and params.
  struct alignas(64) Slot {
    explicit Slot(std::size_t n) : params(n) {}
    // Sized once at allocation, never resized: only the elements change, and only while the
    // slot is neither current nor pinned.
    std::vector<float> params;
    // Written by the server only while the slot is neither current nor pinned, before it is
    // published (release store of current_); read by a reader only under a validated pin, so
    // current_ and pins order every access; no atomic needed.
    std::uint64_t version = 0;
    // Pins held plus acquire() calls that are checking this slot.
    // - Increment (acquire()): seq_cst. With the load of current_ after it and the server's
    //   seq_cst store of current_ followed by its seq_cst load of pins in begin_update(), this
    //   is a store->load (Dekker) handshake: in the single order of seq_cst operations either
    //   the reader's re-load of current_ comes after the server's store (the reader sees the
    //   slot is no longer current and backs off), or the server's load of pins comes after the
    //   increment (the server sees the pin and skips the slot). Acquire/release alone would
    //   allow both to miss each other.
    // - Decrement (release, or a failed acquire() backing off): release, so the reader's reads
    //   of params happen before the server's reuse of the buffer (its load is seq_cst, so
    //   acquire). A relaxed back-off would also do (RMWs continue a release sequence), but it
    //   costs the same on x86 and needs no argument.
    std::atomic<int> pins{0};
  };

  std::size_t n_;
  std::size_t max_slots_;
  // Fixed capacity, never reallocated, so readers can index it while the server grows the
  // store. Entry s is written once, by the server, before slot s is first published; a reader
  // only follows an index it loaded from current_ (acquire), which orders the write before.
  std::unique_ptr<std::unique_ptr<Slot>[]> slots_;
  // Slots allocated: written by the server only; relaxed, as it guards no data (the server
  // reads its own writes, and buffers() is a statistic).
  std::atomic<std::size_t> allocated_{0};
  // The index of the current slot; written by the server only.
  // - publish(): seq_cst store. Its release half makes the slot's params and version (and its
  //   slots_ entry) visible to the readers that load this index; its seq_cst half is the
  //   server's side of the handshake described at Slot::pins.
  // - acquire(): the first load is acquire (to dereference slots_[i] safely); the re-load
  //   that validates the pin is seq_cst (the reader's side of the handshake).
  // - The server's own loads are relaxed: it is the only writer and reads its own writes.
  std::atomic<int> current_{0};
  int next_ = -1;              // server only: slot being written
  std::uint64_t version_ = 0;  // server only
};

}  // namespace stalesgd
