// The sparse path of a dense layer that reads the network input directly. Image data sets are
// mostly exact zeros (MNIST: 19% of the pixels are nonzero), so in y_j = W x_j + b only the
// columns of W at nonzero pixels contribute, and dW = dY X^T only needs dY's columns at the
// nonzeros of each pixel. Same sums as the dense products, in a different rounding order.
// For layers of at least one register of rows (narrower ones fit a transposed GEMM better).
//
// Thread safety: one SparseInput per thread (it lives in a layer's scratch).
#pragma once

#include <cstddef>
#include <vector>

#include "model/buffer.hpp"

namespace stalesgd::model {

class SparseInput {
 public:
  // Sizes everything for up to `max_batch` inputs of `dim` features and a W of `rows` rows.
  void reserve(int max_batch, int dim, int rows);

  // Compresses the batch x (dim x n, column-major) into, for each feature, the samples where it
  // is nonzero and their values. Returns false (contents unspecified) when more than
  // `max_density` of the entries are nonzero: the GEMM is then faster.
  bool compress(const float* x, int n, double max_density);

  // y(:, j) = W x_j + b, with max(0, .) when `relu`; W is (rows x dim) column-major. Feature by
  // feature: column p of W is read once (it lives in L2) and added to the columns of y (in L1)
  // of the samples that have feature p.
  void multiply(const float* w, const float* b, bool relu, float* y);

  // dW = dY X^T (rows x dim, overwritten), dY being (rows x n): column p of dW, written once,
  // gathers the columns of dY at the samples that have feature p.
  void weight_gradient(const float* dy, float* dw) const;

  std::size_t nonzeros() const { return n_ > 0 ? static_cast<std::size_t>(sample_start_[n_]) : 0; }

 private:
  int dim_ = 0;
  int rows_ = 0;
  int n_ = 0;
  std::vector<int> sample_start_;  // n + 1 offsets into index_/value_ (by sample)
  std::vector<int> index_;         // feature of each nonzero
  Buffer value_;
  std::vector<int> feature_start_;  // dim + 2 offsets into sample_/feature_value_ (by feature)
  std::vector<int> sample_;         // sample of each nonzero
  Buffer feature_value_;
  Buffer padded_;  // multiply's output with rows padded to whole registers
};

}  // namespace stalesgd::model
