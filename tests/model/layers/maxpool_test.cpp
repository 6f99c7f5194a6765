// MaxPool2: values and switches on a hand-made input, odd sizes, and finite-difference input
// gradients.
#include "model/layers/maxpool.hpp"

#include <catch2/catch.hpp>

#include "model/layers/layer_check.hpp"

using namespace stalesgd;
using namespace stalesgd::model;
using namespace stalesgd::test;

TEST_CASE("MaxPool2 takes the max of each 2x2 window per channel", "[model][maxpool]") {
  // Two channels, 2x4 image, HWC: channel 0 = 0..7 row-major, channel 1 = 7..0.
  MaxPool2 pool(PoolConfig{2, 2, 4});
  std::vector<float> x(16);
  for (int p = 0; p < 8; ++p) {
    x[2 * p] = static_cast<float>(p);
    x[2 * p + 1] = static_cast<float>(7 - p);
  }
  GemmScratch gs;
  auto s = pool.make_scratch(1, gs);
  std::vector<float> y(4);
  pool.forward(nullptr, x.data(), y.data(), 1, *s, gs);
  CHECK(y == std::vector<float>{5, 7, 7, 5});  // (window, channel): (0,0) (0,1) (1,0) (1,1)
  std::vector<float> dy{1, 2, 3, 4};
  std::vector<float> dx(16, -1.0f);
  pool.backward(nullptr, x.data(), y.data(), dy.data(), dx.data(), nullptr, 1, *s, gs);
  std::vector<float> expect(16, 0.0f);
  expect[2 * 5] = 1;      // channel 0, window 0: pixel (1,1)
  expect[2 * 0 + 1] = 2;  // channel 1, window 0: pixel (0,0)
  expect[2 * 7] = 3;      // channel 0, window 1: pixel (1,3)
  expect[2 * 2 + 1] = 4;  // channel 1, window 1: pixel (0,2)
  CHECK(dx == expect);
}

TEST_CASE("MaxPool2 input gradients match finite differences", "[model][maxpool]") {
  for (auto config : {PoolConfig{3, 6, 4}, PoolConfig{2, 5, 7}}) {  // even, odd
    MaxPool2 pool(config);
    const int n = 2;
    INFO(config.channels << "x" << config.height << "x" << config.width);
    CHECK(pool.output_size() ==
          static_cast<std::size_t>(config.channels * (config.height / 2) * (config.width / 2)));
    const auto c = check_layer(pool, random_floats(pool.input_size() * n, -1.0f, 1.0f, 6), n,
                               {.coords = 200, .h = 1e-3f});
    require_passes(c.input, "dX");
  }
}
