// ParameterStore: the server's versioned parameters. The server writes w_{j+1} into a free
// buffer and publishes it; workers pin the current version and read it in place, so a worker
// never sees a half-updated vector and never copies the parameters. A pinned buffer stays alive
// until released, which also keeps w_tau(j) available to the server for the staleness-aware
// learning rate. Buffers are recycled: at most P + 2 are ever held (each worker pins at most
// one, plus the current and the one being written).
//
// Thread safety: acquire() and Pin's destructor may be called from any thread. begin_update(),
// publish(), current() and version() are for the server only (the single writer, under the
// server lock).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

namespace stalesgd {

class ParameterStore {
 public:
  explicit ParameterStore(std::span<const float> initial);
  ParameterStore(const ParameterStore&) = delete;
  ParameterStore& operator=(const ParameterStore&) = delete;

  // A pinned version: its buffer is not reused while the Pin lives.
  class Pin {
   public:
    Pin() = default;
    Pin(Pin&& other) noexcept { *this = std::move(other); }
    Pin& operator=(Pin&& other) noexcept;
    ~Pin() { release(); }
    void release();
    bool valid() const { return store_ != nullptr; }
    std::uint64_t version() const { return version_; }
    std::span<const float> params() const { return params_; }

   private:
    friend class ParameterStore;
    ParameterStore* store_ = nullptr;
    int slot_ = -1;
    std::uint64_t version_ = 0;
    std::span<const float> params_;
  };

  Pin acquire();

  // Server: a buffer no one reads, to write the next version into.
  std::span<float> begin_update();
  // Server: makes the buffer from begin_update() current; version + 1.
  void publish();
  // Server: the current parameters (the server is the only writer, so no pin is needed).
  std::span<const float> current() const { return slots_[static_cast<std::size_t>(current_)]->params; }
  std::uint64_t version() const { return version_; }
  // Buffers ever allocated (memory held = this x num_params floats).
  std::size_t buffers() const;

 private:
  struct Slot {
    std::vector<float> params;
    int pins = 0;  // GUARDED_BY(mu_)
  };
  void unpin(int slot);

  std::size_t n_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Slot>> slots_;  // GUARDED_BY(mu_) for growth and pins
  int current_ = 0;                           // GUARDED_BY(mu_); written by the server only
  int next_ = -1;                             // server only: slot being written
  std::uint64_t version_ = 0;                 // GUARDED_BY(mu_); written by the server only
};

}  // namespace stalesgd
