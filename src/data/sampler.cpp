// MinibatchSampler: per-epoch seeded permutations and row gathering.
#include "stalesgd/data/sampler.hpp"
#include "util/state_stream.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace stalesgd {

MinibatchSampler::MinibatchSampler(const Split& split, int batch_size, std::uint64_t stream_seed)
    : MinibatchSampler(split, batch_size, stream_seed, {}) {}

MinibatchSampler::MinibatchSampler(const Split& split, int batch_size, std::uint64_t stream_seed,
                                   const std::vector<std::uint32_t>& shard)
    : split_(split),
      batch_size_(batch_size),
      rng_(stream_seed),
      stream_seed_(stream_seed),
      order_(shard),
      features_(static_cast<std::size_t>(batch_size) * split.dim()),
      labels_(static_cast<std::size_t>(batch_size)) {
  if (order_.empty()) {
    order_.resize(split.count);
    std::iota(order_.begin(), order_.end(), 0u);
  }
  reshuffle();
}

void MinibatchSampler::reshuffle() {
  // Fisher-Yates on the raw engine bits (not std::shuffle, whose use of the engine is
  // implementation-defined), so a seed means the same batches on every standard library.
  for (std::size_t i = order_.size(); i > 1; --i) {
    const std::size_t j = static_cast<std::size_t>(rng_() % i);
    std::swap(order_[i - 1], order_[j]);
  }
  cursor_ = 0;
}

Batch MinibatchSampler::next() {
  const std::size_t dim = split_.dim();
  for (int b = 0; b < batch_size_; ++b) {
    if (cursor_ == order_.size()) reshuffle();
    const std::uint32_t i = order_[cursor_++];
    std::memcpy(features_.data() + static_cast<std::size_t>(b) * dim, split_.sample(i),
                dim * sizeof(float));
    labels_[static_cast<std::size_t>(b)] = split_.labels[i];
  }
  return Batch{features_.data(), labels_.data(), batch_size_,
               mix64(stream_seed_ ^ mix64(drawn_++))};
}

void MinibatchSampler::save(StateWriter& out) const {
  out.tag("sampler");
  out.rng(rng_);
  out.values(order_);
  out.u64(cursor_);
  out.u64(drawn_);
}

void MinibatchSampler::load(StateReader& in) {
  if (!in.tag("sampler")) return;
  in.rng(rng_);
  auto order = in.values<std::uint32_t>(static_cast<std::int64_t>(order_.size()));
  const std::uint64_t cursor = in.u64();
  const std::uint64_t drawn = in.u64();
  if (!in.ok()) return;
  if (cursor > order.size() ||
      std::any_of(order.begin(), order.end(), [&](std::uint32_t i) { return i >= split_.count; })) {
    in.fail("a sample index out of range");
    return;
  }
  order_ = std::move(order);
  cursor_ = cursor;
  drawn_ = drawn;
}

}  // namespace stalesgd
