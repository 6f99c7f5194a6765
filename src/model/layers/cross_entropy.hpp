// Softmax cross-entropy on a batch of logits Z (classes x n, column-major):
//   loss_j = logsumexp(z_j) - z_j[y_j],  d(mean loss)/dZ = (softmax(Z) - onehot(y)) / n,
// with the column max subtracted before exp so that no logit overflows.
#pragma once

#include <cstdint>

#include "model/buffer.hpp"

namespace stalesgd::model {

struct CrossEntropyScratch {
  Buffer col_max;    // n
  Buffer col_sum;    // n
  Buffer col_scale;  // n
  void reserve(int max_batch);
};

struct CrossEntropySums {
  double loss = 0.0;  // sum over the batch (not the mean)
  int errors = 0;     // samples whose largest logit is not the label's (first max wins ties)
};

// When `dlogits` is non-null it receives the gradient of the MEAN loss over the n samples.
CrossEntropySums softmax_cross_entropy(const float* logits, const std::uint8_t* labels, int classes,
                                       int n, float* dlogits, CrossEntropyScratch& s);

}  // namespace stalesgd::model
