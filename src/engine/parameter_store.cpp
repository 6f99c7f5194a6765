#include "engine/parameter_store.hpp"

#include <stdexcept>

namespace stalesgd {

ParameterStore::ParameterStore(std::span<const float> initial) : n_(initial.size()) {
  auto slot = std::make_unique<Slot>();
  slot->params.assign(initial.begin(), initial.end());
  slots_.push_back(std::move(slot));
}

ParameterStore::Pin& ParameterStore::Pin::operator=(Pin&& other) noexcept {
  if (this != &other) {
    release();
    store_ = other.store_;
    slot_ = other.slot_;
    version_ = other.version_;
    params_ = other.params_;
    other.store_ = nullptr;
  }
  return *this;
}

void ParameterStore::Pin::release() {
  if (store_ != nullptr) store_->unpin(slot_);
  store_ = nullptr;
}

ParameterStore::Pin ParameterStore::acquire() {
  Pin pin;
  std::lock_guard lock(mu_);
  Slot& slot = *slots_[static_cast<std::size_t>(current_)];
  ++slot.pins;
  pin.store_ = this;
  pin.slot_ = current_;
  pin.version_ = version_;
  pin.params_ = slot.params;
  return pin;
}

void ParameterStore::unpin(int slot) {
  std::lock_guard lock(mu_);
  --slots_[static_cast<std::size_t>(slot)]->pins;
}

std::span<float> ParameterStore::begin_update() {
  std::lock_guard lock(mu_);
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    if (static_cast<int>(s) != current_ && slots_[s]->pins == 0) {
      next_ = static_cast<int>(s);
      return slots_[s]->params;
    }
  }
  auto slot = std::make_unique<Slot>();
  slot->params.resize(n_);
  slots_.push_back(std::move(slot));
  next_ = static_cast<int>(slots_.size() - 1);
  return slots_.back()->params;
}

void ParameterStore::publish() {
  std::lock_guard lock(mu_);
  if (next_ < 0) throw std::logic_error("ParameterStore::publish without begin_update");
  current_ = next_;
  next_ = -1;
  ++version_;
}

std::size_t ParameterStore::buffers() const {
  std::lock_guard lock(mu_);
  return slots_.size();
}

}  // namespace stalesgd
