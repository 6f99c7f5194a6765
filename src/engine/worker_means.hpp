// WorkerMeans: the server's round for a rule that averages per worker first (Malenia SGD,
// rules/malenia.cpp; docs/rules.md): each worker's sum of lr_i g_i and count B_i over the round,
// and the update w_{j+1} = w_j - (1/n) sum_i (1/B_i) sum_j lr g_ij over the n workers that
// contributed. Holds a parameter-sized sum per worker. The last `state` entries (a model's
// buffers, Model::num_state) are summed with weight 1 in place of lr.
//
// Thread safety: not thread-safe; owned by the server (one holder of the server lock at a time).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "util/state_stream.hpp"

namespace stalesgd {

class WorkerMeans {
 public:
  WorkerMeans(int workers, std::size_t n, std::size_t state = 0);

  void add(int worker, std::span<const float> g, float lr);
  // out = w - the mean over the contributing workers of each one's mean; starts a new round.
  // Requires a gradient in the round. `out` must not alias `w`.
  void apply(std::span<const float> w, std::span<float> out);
  int count(int worker) const { return counts_[static_cast<std::size_t>(worker)]; }

  void save(StateWriter& out) const;
  void load(StateReader& in);
  void clear();

 private:
  std::size_t n_;
  std::size_t state_;
  std::vector<std::vector<float>> sums_;  // a worker's is resized on its first gradient
  std::vector<int> counts_;
};

}  // namespace stalesgd
