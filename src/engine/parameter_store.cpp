// ParameterStore: lock-free pins on versioned parameter buffers (memory orders argued in the
// header, at Slot::pins and current_).
#include "engine/parameter_store.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace stalesgd {

ParameterStore::ParameterStore(std::span<const float> initial, std::size_t max_slots)
    : n_(initial.size()),
      max_slots_(max_slots),
      slots_(std::make_unique<std::unique_ptr<Slot>[]>(max_slots)) {
  // One for the current version and one to write the next into.
  if (max_slots < 2) throw std::invalid_argument("ParameterStore needs at least 2 slots");
  slots_[0] = std::make_unique<Slot>(n_);
  std::copy(initial.begin(), initial.end(), slots_[0]->params.begin());
  allocated_.store(1, std::memory_order_relaxed);
}

ParameterStore::Pin& ParameterStore::Pin::operator=(Pin&& other) noexcept {
  if (this != &other) {
    release();
    pins_ = other.pins_;
    version_ = other.version_;
    params_ = other.params_;
    other.pins_ = nullptr;
  }
  return *this;
}

ParameterStore::Pin ParameterStore::Pin::share() const {
  Pin pin;
  if (pins_ == nullptr) return pin;
  pins_->fetch_add(1, std::memory_order_relaxed);  // this pin already keeps the buffer alive
  pin.pins_ = pins_;
  pin.version_ = version_;
  pin.params_ = params_;
  return pin;
}

void ParameterStore::Pin::release() {
  if (pins_ != nullptr) pins_->fetch_sub(1, std::memory_order_release);
  pins_ = nullptr;
}

ParameterStore::Pin ParameterStore::acquire() {
  for (;;) {
    const int i = current_.load(std::memory_order_acquire);
    Slot& slot = *slots_[static_cast<std::size_t>(i)];
    slot.pins.fetch_add(1, std::memory_order_seq_cst);
    if (current_.load(std::memory_order_seq_cst) == i) {
      // Still current after the pin is visible: the server will not pick this slot until the
      // pin is released, and everything it wrote before publishing it is visible here.
      Pin pin;
      pin.pins_ = &slot.pins;
      pin.version_ = slot.version;
      pin.params_ = slot.params;
      return pin;
    }
    // The server published meanwhile and may already be writing this slot: read nothing.
    slot.pins.fetch_sub(1, std::memory_order_release);
  }
}

std::span<const float> ParameterStore::current() const {
  return slots_[static_cast<std::size_t>(current_.load(std::memory_order_relaxed))]->params;
}

std::span<float> ParameterStore::begin_update() {
  const int cur = current_.load(std::memory_order_relaxed);
  const std::size_t allocated = allocated_.load(std::memory_order_relaxed);
  // First free slot in index order: the buffer reuse pattern docs/performance.md measured.
  for (std::size_t s = 0; s < allocated; ++s) {
    if (static_cast<int>(s) != cur && slots_[s]->pins.load(std::memory_order_seq_cst) == 0) {
      next_ = static_cast<int>(s);
      return slots_[s]->params;
    }
  }
  if (allocated == max_slots_) {
    throw std::length_error("ParameterStore: all " + std::to_string(max_slots_) +
                            " buffers are pinned; construct it with more max_slots");
  }
  // A fresh slot: no reader can know its index before it is published.
  slots_[allocated] = std::make_unique<Slot>(n_);
  allocated_.store(allocated + 1, std::memory_order_relaxed);
  next_ = static_cast<int>(allocated);
  return slots_[allocated]->params;
}

void ParameterStore::restore(std::uint64_t version, std::span<const float> params,
                             std::size_t buffers) {
  if (params.size() != n_ || buffers > max_slots_) {
    throw std::length_error("ParameterStore::restore: parameters or buffers do not fit");
  }
  Slot& cur = *slots_[static_cast<std::size_t>(current_.load(std::memory_order_relaxed))];
  std::copy(params.begin(), params.end(), cur.params.begin());
  cur.version = version_ = version;
  for (std::size_t s = allocated_.load(std::memory_order_relaxed); s < buffers; ++s) {
    slots_[s] = std::make_unique<Slot>(n_);
    allocated_.store(s + 1, std::memory_order_relaxed);
  }
}

ParameterStore::Pin ParameterStore::adopt(std::uint64_t version, std::span<const float> params) {
  if (params.size() != n_) throw std::length_error("ParameterStore::adopt: wrong size");
  // A buffer that is neither current nor pinned, as begin_update() finds one.
  const std::span<float> buffer = begin_update();
  std::copy(params.begin(), params.end(), buffer.begin());
  Slot& slot = *slots_[static_cast<std::size_t>(next_)];
  next_ = -1;
  slot.version = version;
  slot.pins.fetch_add(1, std::memory_order_relaxed);  // no reader exists yet
  Pin pin;
  pin.pins_ = &slot.pins;
  pin.version_ = version;
  pin.params_ = slot.params;
  return pin;
}

void ParameterStore::publish() {
  if (next_ < 0) throw std::logic_error("ParameterStore::publish without begin_update");
  ++version_;
  slots_[static_cast<std::size_t>(next_)]->version = version_;
  current_.store(next_, std::memory_order_seq_cst);
  next_ = -1;
}

}  // namespace stalesgd
