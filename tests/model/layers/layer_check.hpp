// Finite-difference check of one Layer: with L = sum(r .* forward(x; w)) for a fixed random r,
// dL/d(out) = r, so backward(dout = r) must give dL/dw and dL/dx; both are compared with
// central differences of L (tests/model/gradient_check.hpp).
#pragma once

#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "model/gradient_check.hpp"
#include "model/layers/layer.hpp"

namespace stalesgd::test {

inline std::vector<float> random_floats(std::size_t n, float lo, float hi, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

struct LayerCheck {
  GradCheck weights;
  GradCheck input;
};

// `x` holds n inputs; weights come from the layer's init plus a random bias shift (so that
// biases are not all zero and ReLUs sit away from their kink).
inline LayerCheck check_layer(const model::Layer& layer, std::vector<float> x, int n,
                              GradCheckOptions opt = {}) {
  model::GemmScratch gs;
  auto scratch = layer.make_scratch(n, gs);
  std::vector<float> w(layer.num_params());
  Rng rng(11);
  layer.init_params(w.data(), rng);
  const auto shift = random_floats(w.size(), -0.1f, 0.1f, 12);
  for (std::size_t i = layer.num_weights(); i < w.size(); ++i) w[i] += shift[i];
  const std::size_t out_size = layer.output_size() * n;
  const auto r = random_floats(out_size, -1.0f, 1.0f, 13);
  std::vector<float> out(out_size);
  auto loss = [&] {
    layer.forward(w.data(), x.data(), out.data(), n, *scratch, gs);
    double l = 0.0;
    for (std::size_t i = 0; i < out_size; ++i) l += static_cast<double>(r[i]) * out[i];
    return l;
  };
  loss();
  std::vector<float> dout = r;
  std::vector<float> dw(w.size(), -7.0f);  // overwritten entirely by backward
  std::vector<float> din(x.size(), -7.0f);
  layer.backward(w.data(), x.data(), out.data(), dout.data(), din.data(), dw.data(), n, *scratch,
                 gs);
  LayerCheck c;
  if (!w.empty())
    c.weights = check_gradient(std::span<float>(w), std::span<const float>(dw), loss, opt);
  c.input = check_gradient(std::span<float>(x), std::span<const float>(din), loss, opt);
  return c;
}

inline void require_passes(const GradCheck& c, const char* what) {
  INFO(what << ": checked " << c.checked << ", skipped " << c.kinks << " kinks, worst " << c.worst
            << "; " << c.first_failure);
  CHECK(c.failures == 0);
  CHECK(c.checked >= 3 * (c.checked + c.kinks) / 4);  // kinks are the exception
}

}  // namespace stalesgd::test
