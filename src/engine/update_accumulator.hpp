// UpdateAccumulator: the server's running sum of lr_i * g_i over one round and the update
// w_{j+1} = w_j - (1/K) * sum. The sequential reference trainer uses the same code, so that
// P = 1 sync reproduces it bit for bit. The last `state` entries are a model's state
// (Model::num_state: buffers), whose "gradients" are changes folded with weight 1, not lr_i.
//
// Thread safety: not thread-safe; owned by the server (one holder of the server lock at a time).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "util/state_stream.hpp"

namespace stalesgd {

class UpdateAccumulator {
 public:
  explicit UpdateAccumulator(std::size_t n, std::size_t state = 0) : sum_(n, 0.0f), state_(state) {}

  // sum += lr * g (the first gradient of a round overwrites instead of adding to zero).
  void add(std::span<const float> g, float lr);
  // The round's last gradient and the update in one pass: out = w - (sum + lr g) / (count + 1),
  // then starts a new round. Saves a pass over the sum on the critical path of a sync round.
  // With count() == 0 it is apply_single(w, g, lr, out), bit for bit. `divisor` as apply()'s.
  void add_and_apply(std::span<const float> g, float lr, std::span<const float> w,
                     std::span<float> out, double divisor = 0.0);
  // The round without another gradient: out = w - sum / count(), then starts a new round. A
  // round that a failed worker's departure completes (docs/rules.md, "Failed workers"). With
  // `divisor` > 0 the trained parameters' sum is divided by it instead (Rule::update_divisor:
  // MindFlayer as published); a model's state is still averaged over count(). A round with no
  // gradient leaves w as it is.
  void apply(std::span<const float> w, std::span<float> out, double divisor = 0.0);
  // A round of one gradient, fused into one pass: out = w - lr * g (no sum buffer touched).
  // Every K = 1 update goes through here (server and sequential reference alike), so they
  // round identically. `out` may alias `w`.
  static void apply_single(std::span<const float> w, std::span<const float> g, float lr,
                           std::span<float> out, std::size_t state = 0);

  int count() const { return count_; }
  // Checkpoints: the round's sum, bit for bit.
  void save(StateWriter& out) const;
  void load(StateReader& in);
  // Forgets the round (a real-clock resume).
  void clear() { count_ = 0; }

 private:
  std::vector<float> sum_;
  std::size_t state_;  // trailing entries folded with weight 1
  int count_ = 0;
};

}  // namespace stalesgd
