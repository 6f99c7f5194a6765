// SparseInput: compression, the density cut-off, and the products against dense references
// for row counts that are whole registers, partial ones, and both.
#include "model/layers/sparse_input.hpp"

#include <catch2/catch.hpp>

#include "model/layers/layer_check.hpp"

using namespace stalesgd::model;
using namespace stalesgd::test;

TEST_CASE("SparseInput multiplies and transposes like the dense products", "[model][sparse]") {
  const int dim = 45;  // not a multiple of 16: exercises the scalar tail of the compression
  const int n = 6;
  auto x = random_floats(dim * n, 0.0f, 1.0f, 1);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = (i * 7) % 5 == 0 ? x[i] : 0.0f;
  std::size_t nnz = 0;
  for (float v : x) nnz += v != 0.0f;
  // 16: one full register; 29, 37: full + partial; 160: 8 + 2 full
  for (int rows : {16, 29, 37, 160}) {
    for (bool relu : {false, true}) {
      INFO("rows " << rows << " relu " << relu);
      SparseInput sp;
      sp.reserve(n, dim, rows);
      REQUIRE(sp.compress(x.data(), n, 0.5));
      CHECK(sp.nonzeros() == nnz);

      const auto w = random_floats(rows * dim, -1.0f, 1.0f, 2);
      const auto b = random_floats(rows, -1.0f, 1.0f, 3);
      std::vector<float> y(rows * n);
      sp.multiply(w.data(), b.data(), relu, y.data());
      for (int j = 0; j < n; ++j)
        for (int r = 0; r < rows; ++r) {
          double acc = b[r];
          for (int p = 0; p < dim; ++p) acc += w[p * rows + r] * x[j * dim + p];
          if (relu) acc = std::max(acc, 0.0);
          REQUIRE(y[j * rows + r] == Approx(acc).margin(1e-5));
        }

      const auto dy = random_floats(rows * n, -1.0f, 1.0f, 4);
      std::vector<float> dw(rows * dim, -3.0f);
      sp.weight_gradient(dy.data(), dw.data());
      for (int p = 0; p < dim; ++p)
        for (int r = 0; r < rows; ++r) {
          double acc = 0.0;
          for (int j = 0; j < n; ++j) acc += dy[j * rows + r] * x[j * dim + p];
          REQUIRE(dw[p * rows + r] == Approx(acc).margin(1e-5));
        }
    }
  }
}

TEST_CASE("SparseInput declines a batch denser than the cut-off", "[model][sparse]") {
  const auto x = random_floats(64 * 4, 0.1f, 1.0f, 5);  // no zeros at all
  SparseInput sp;
  sp.reserve(4, 64, 32);
  CHECK_FALSE(sp.compress(x.data(), 4, 0.35));
  CHECK(sp.compress(x.data(), 4, 1.0));
}
