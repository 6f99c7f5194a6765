// MinibatchSampler: a worker's stream of minibatches over a training split. Each epoch is a
// fresh seeded permutation of the samples (sampling without replacement within an epoch); a
// minibatch's rows are gathered into the sampler's own buffer, so the Batch it returns is
// contiguous, as the models' GEMMs want it.
//
// Thread safety: one sampler per worker, used by that worker's thread only. The Split is
// shared read-only.
#pragma once

#include <cstdint>
#include <vector>

#include "stalesgd/data/dataset.hpp"
#include "stalesgd/util/seed.hpp"

namespace stalesgd {

// A checkpoint's streams (private to the library: util/state_stream.hpp in src/).
class StateWriter;
class StateReader;

class MinibatchSampler {
 public:
  // `stream_seed` should come from derive_seed(run_seed, SeedStream::kSampler, worker).
  MinibatchSampler(const Split& split, int batch_size, std::uint64_t stream_seed);
  // Samples only `shard`'s indices into `split` (a worker's shard, stalesgd/data/partition.hpp);
  // an empty shard is the whole split.
  MinibatchSampler(const Split& split, int batch_size, std::uint64_t stream_seed,
                   const std::vector<std::uint32_t>& shard);

  // The next minibatch; valid until the next call. Its seed is the draw's: derive_seed of this
  // stream's seed and the number of minibatches drawn before it.
  Batch next();

  // Checkpoints: where the stream is (engine, epoch permutation, position), so a resumed run
  // draws the same minibatches.
  void save(StateWriter& out) const;
  void load(StateReader& in);

 private:
  void reshuffle();

  const Split& split_;
  int batch_size_;
  Rng rng_;
  std::uint64_t stream_seed_;
  std::uint64_t drawn_ = 0;           // minibatches returned so far
  std::vector<std::uint32_t> order_;  // the current epoch's permutation
  std::size_t cursor_ = 0;            // next position in order_
  std::vector<float> features_;       // batch_size x dim, gathered rows
  std::vector<std::uint8_t> labels_;
};

}  // namespace stalesgd
