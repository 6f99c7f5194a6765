// Single-threaded SGEMM, C += alpha * op(A) * op(B), on Eigen's GEBP kernel with packing buffers
// owned by the caller, so that a training step never allocates (Eigen's own products allocate
// their packing panels on the heap once they exceed EIGEN_STACK_ALLOCATION_LIMIT).
//
// Thread safety: a GemmScratch belongs to one thread (it lives in a model Workspace).
#pragma once

#include <cstddef>

#include "model/buffer.hpp"

namespace stalesgd::model {

// op(X) = X (kN) or X^T (kT). All matrices are column-major with a leading dimension.
enum class Op { kN, kT };

// Packing panels for every product reserved with reserve(); sized once, never reallocated
// during a step.
class GemmScratch {
 public:
  // Makes room for products with m <= max_m, n <= max_n, k <= max_k.
  void reserve(std::size_t max_m, std::size_t max_n, std::size_t max_k);
  std::size_t capacity_floats() const { return a_.size() + b_.size(); }
  const float* data() const { return a_.data(); }

 private:
  friend void gemm(Op, Op, int, int, int, float, const float*, int, const float*, int, float*, int,
                   GemmScratch&);
  Buffer a_;  // packed panel of op(A): kc x mc
  Buffer b_;  // packed panel of op(B): kc x nc
};

// C (m x n, leading dimension ldc) += alpha * op(A) * op(B), where op(A) is m x k and op(B) is
// k x n. Throws std::logic_error when the shape was not reserved (a bug, not an input error).
void gemm(Op op_a, Op op_b, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float* c, int ldc, GemmScratch& scratch);

}  // namespace stalesgd::model
