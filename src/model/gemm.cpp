#include "model/gemm.hpp"

#include <algorithm>
#include <stdexcept>

#include <Eigen/Core>

namespace stalesgd::model {
namespace {

using Index = Eigen::Index;

// Eigen's level3_blocking with the block sizes of one call and panels borrowed from GemmScratch.
class BorrowedBlocking : public Eigen::internal::level3_blocking<float, float> {
 public:
  BorrowedBlocking(Index m, Index n, Index k, float* a, std::size_t a_cap, float* b,
                   std::size_t b_cap) {
    m_kc = k;
    m_mc = m;
    m_nc = n;
    // Goto-style cache blocking for this shape (the same heuristic Eigen's own products use).
    Eigen::internal::computeProductBlockingSizes<float, float, 1, Index>(m_kc, m_mc, m_nc, 1);
    if (static_cast<std::size_t>(m_kc * m_mc) > a_cap ||
        static_cast<std::size_t>(m_kc * m_nc) > b_cap) {
      throw std::logic_error("gemm: product larger than the reserved GemmScratch");
    }
    m_blockA = a;
    m_blockB = b;
  }
};

template <int LhsOrder, int RhsOrder>
void run(Index m, Index n, Index k, float alpha, const float* a, Index lda, const float* b,
         Index ldb, float* c, Index ldc, BorrowedBlocking& blocking) {
  Eigen::internal::general_matrix_matrix_product<Index, float, LhsOrder, false, float, RhsOrder,
                                                 false, Eigen::ColMajor, 1>::run(m, n, k, a, lda, b,
                                                                                 ldb, c, 1, ldc,
                                                                                 alpha, blocking);
}

}  // namespace

void GemmScratch::reserve(std::size_t max_m, std::size_t max_n, std::size_t max_k) {
  // kc <= k, mc <= m and nc <= n for every call, so k*m and k*n floats always suffice.
  a_.resize(std::max(a_.size(), max_m * max_k));
  b_.resize(std::max(b_.size(), max_n * max_k));
}

void gemm(Op op_a, Op op_b, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float* c, int ldc, GemmScratch& scratch) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) return;  // C += 0
  BorrowedBlocking blocking(m, n, k, scratch.a_.data(), scratch.a_.size(), scratch.b_.data(),
                            scratch.b_.size());
  constexpr int kCol = Eigen::ColMajor;
  constexpr int kRow = Eigen::RowMajor;
  // X^T of a column-major X is X read row-major: the transposes cost nothing but a template flag.
  if (op_a == Op::kN && op_b == Op::kN) {
    run<kCol, kCol>(m, n, k, alpha, a, lda, b, ldb, c, ldc, blocking);
  } else if (op_a == Op::kN) {
    run<kCol, kRow>(m, n, k, alpha, a, lda, b, ldb, c, ldc, blocking);
  } else if (op_b == Op::kN) {
    run<kRow, kCol>(m, n, k, alpha, a, lda, b, ldb, c, ldc, blocking);
  } else {
    run<kRow, kRow>(m, n, k, alpha, a, lda, b, ldb, c, ldc, blocking);
  }
}

}  // namespace stalesgd::model
