// Dense layer: finite-difference gradients (with and without the fused ReLU), and the sparse
// input path against the dense GEMM path.
#include "model/layers/dense.hpp"

#include <catch2/catch.hpp>

#include "model/layers/layer_check.hpp"

using namespace stalesgd;
using namespace stalesgd::model;
using namespace stalesgd::test;

TEST_CASE("Dense gradients match finite differences", "[model][dense]") {
  for (bool relu : {false, true}) {
    Dense layer(DenseConfig{13, 21, relu, false});
    const int n = 5;
    const auto c = check_layer(layer, random_floats(13 * n, -1.0f, 1.0f, 1), n);
    INFO("relu " << relu);
    require_passes(c.weights, "dW, db");
    require_passes(c.input, "dX");
  }
}

TEST_CASE("Dense sparse input path gives the dense path's output and gradient", "[model][dense]") {
  const int in = 50;
  const int out = 37;  // exercises full, half, quarter registers and a scalar tail
  const int n = 9;
  auto x = random_floats(in * n, -1.0f, 1.0f, 2);
  const auto keep = random_floats(in * n, 0.0f, 1.0f, 3);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = keep[i] < 0.8f ? 0.0f : x[i];  // ~20% dense
  Dense sparse(DenseConfig{in, out, true, true, true});
  Dense dense(DenseConfig{in, out, true, true, false});
  GemmScratch gs;
  auto s1 = sparse.make_scratch(n, gs);
  auto s2 = dense.make_scratch(n, gs);
  std::vector<float> w(sparse.num_params());
  Rng rng(4);
  sparse.init_params(w.data(), rng);
  for (std::size_t i = sparse.num_weights(); i < w.size(); ++i) w[i] = 0.01f * (i % 7);
  std::vector<float> y1(out * n), y2(out * n);
  sparse.forward(w.data(), x.data(), y1.data(), n, *s1, gs);
  dense.forward(w.data(), x.data(), y2.data(), n, *s2, gs);
  for (std::size_t i = 0; i < y1.size(); ++i) REQUIRE(y1[i] == Approx(y2[i]).margin(1e-5));
  auto d1 = random_floats(out * n, -1.0f, 1.0f, 5);
  auto d2 = d1;
  std::vector<float> g1(w.size()), g2(w.size());
  sparse.backward(w.data(), x.data(), y1.data(), d1.data(), nullptr, g1.data(), n, *s1, gs);
  dense.backward(w.data(), x.data(), y2.data(), d2.data(), nullptr, g2.data(), n, *s2, gs);
  for (std::size_t i = 0; i < g1.size(); ++i) REQUIRE(g1[i] == Approx(g2[i]).margin(1e-5));
}

TEST_CASE("Dense counts its parameters and FLOPs", "[model][dense]") {
  Dense layer(DenseConfig{784, 128, true, true});
  CHECK(layer.num_weights() == 784 * 128);
  CHECK(layer.num_params() == 784 * 128 + 128);
  CHECK(layer.flops(64, false) == 2.0 * 2 * 784 * 128 * 64);  // forward + dW, no dX
  CHECK(layer.flops(64, true) == 2.0 * 3 * 784 * 128 * 64);
}
