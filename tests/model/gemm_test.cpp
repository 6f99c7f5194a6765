// gemm: every transpose combination against a plain triple loop, accumulation into C, and the
// logic_error for a product larger than what was reserved.
#include "model/gemm.hpp"

#include <stdexcept>

#include <catch2/catch.hpp>

#include "model/layers/layer_check.hpp"

using namespace stalesgd::model;
using namespace stalesgd::test;

TEST_CASE("gemm computes C += alpha op(A) op(B) for every transpose", "[model][gemm]") {
  const int m = 37, n = 29, k = 53;
  GemmScratch gs;
  gs.reserve(m, n, k);
  for (Op oa : {Op::kN, Op::kT}) {
    for (Op ob : {Op::kN, Op::kT}) {
      const int lda = oa == Op::kN ? m + 3 : k + 1;  // leading dimensions larger than the rows
      const int ldb = ob == Op::kN ? k + 2 : n;
      const int ldc = m + 5;
      const auto a =
          random_floats(static_cast<std::size_t>(lda) * (oa == Op::kN ? k : m), -1, 1, 1);
      const auto b =
          random_floats(static_cast<std::size_t>(ldb) * (ob == Op::kN ? n : k), -1, 1, 2);
      auto c = random_floats(static_cast<std::size_t>(ldc) * n, -1, 1, 3);
      auto expect = c;
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
          double acc = 0.0;
          for (int p = 0; p < k; ++p) {
            const float av = oa == Op::kN ? a[p * lda + i] : a[i * lda + p];
            const float bv = ob == Op::kN ? b[j * ldb + p] : b[p * ldb + j];
            acc += static_cast<double>(av) * bv;
          }
          expect[j * ldc + i] += static_cast<float>(0.5 * acc);
        }
      gemm(oa, ob, m, n, k, 0.5f, a.data(), lda, b.data(), ldb, c.data(), ldc, gs);
      INFO("op_a " << (oa == Op::kN ? "N" : "T") << " op_b " << (ob == Op::kN ? "N" : "T"));
      for (std::size_t i = 0; i < c.size(); ++i) REQUIRE(c[i] == Approx(expect[i]).margin(1e-4));
    }
  }
}

TEST_CASE("gemm refuses a product larger than its reserved scratch", "[model][gemm]") {
  GemmScratch gs;
  gs.reserve(8, 8, 8);
  std::vector<float> a(4096, 1.0f), b(4096, 1.0f), c(4096, 0.0f);
  CHECK_THROWS_AS(
      gemm(Op::kN, Op::kN, 64, 64, 64, 1.0f, a.data(), 64, b.data(), 64, c.data(), 64, gs),
      std::logic_error);
}
