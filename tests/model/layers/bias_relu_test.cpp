// Fused bias + ReLU and the bias gradient, on both the flat (rows < 16) and the column paths.
#include "model/layers/bias_relu.hpp"

#include <catch2/catch.hpp>

#include "model/layers/layer_check.hpp"

using namespace stalesgd::model;
using namespace stalesgd::test;

TEST_CASE("Bias, ReLU and bias gradient match plain loops", "[model][bias_relu]") {
  for (int rows : {1, 6, 10, 16, 37}) {
    for (std::size_t cols : {std::size_t{1}, std::size_t{9}, std::size_t{130}}) {
      for (bool relu : {false, true}) {
        INFO("rows " << rows << " cols " << cols << " relu " << relu);
        auto y = random_floats(rows * cols, -1.0f, 1.0f, rows + cols);
        const auto b = random_floats(rows, -0.5f, 0.5f, 3);
        auto expect = y;
        for (std::size_t j = 0; j < cols; ++j)
          for (int r = 0; r < rows; ++r) {
            float& v = expect[j * rows + r];
            v += b[r];
            if (relu) v = std::max(v, 0.0f);
          }
        add_bias_activation(y.data(), b.data(), rows, cols, relu);
        for (std::size_t i = 0; i < y.size(); ++i) REQUIRE(y[i] == Approx(expect[i]));

        std::vector<float> db(rows);
        bias_gradient(y.data(), rows, cols, db.data());
        for (int r = 0; r < rows; ++r) {
          double sum = 0.0;
          for (std::size_t j = 0; j < cols; ++j) sum += y[j * rows + r];
          REQUIRE(db[r] == Approx(sum).margin(1e-4));
        }
      }
    }
  }
}

TEST_CASE("ReLU backward keeps the gradient where the output is positive", "[model][bias_relu]") {
  const std::vector<float> y{0.0f, 2.0f, 0.0f, 0.5f};
  std::vector<float> dy{1.0f, 2.0f, 3.0f, 4.0f};
  relu_backward(y.data(), dy.data(), dy.size());
  CHECK(dy == std::vector<float>{0.0f, 2.0f, 0.0f, 4.0f});
}

TEST_CASE("Fused ReLU and bias backward equals the two passes", "[model][bias_relu]") {
  for (int rows : {6, 10, 16, 84, 120, 1000}) {  // 1000: run too long, falls back to two passes
    for (std::size_t cols : {std::size_t{1}, std::size_t{7}, std::size_t{200}}) {
      for (bool relu : {false, true}) {
        INFO("rows " << rows << " cols " << cols << " relu " << relu);
        const auto y = random_floats(rows * cols, -1.0f, 1.0f, 21);
        auto d1 = random_floats(rows * cols, -1.0f, 1.0f, 22);
        auto d2 = d1;
        std::vector<float> b1(rows), b2(rows);
        if (relu) relu_backward(y.data(), d1.data(), d1.size());
        bias_gradient(d1.data(), rows, cols, b1.data());
        bias_relu_backward(y.data(), d2.data(), rows, cols, relu, b2.data());
        REQUIRE(d1 == d2);
        for (int r = 0; r < rows; ++r) REQUIRE(b2[r] == Approx(b1[r]).margin(1e-4));
      }
    }
  }
}
