// Conv2d: the forward pass against a direct convolution, and finite-difference gradients for
// each im2col layout (one channel, HWC interleaved, CHW network input), with and without
// padding and ReLU, over several im2col chunks.
#include "model/layers/conv2d.hpp"

#include <catch2/catch.hpp>

#include "model/layers/layer_check.hpp"

using namespace stalesgd;
using namespace stalesgd::model;
using namespace stalesgd::test;

namespace {

// out[s, y, x, f] = b[f] + sum_{ky, kx, c} W[f, (ky, kx, c)] * in[s, c, y + ky - pad, x + kx - pad]
std::vector<float> direct_conv(const ConvConfig& c, const std::vector<float>& w,
                               const std::vector<float>& in, int n) {
  const int ho = c.height + 2 * c.pad - c.kernel + 1;
  const int wo = c.width + 2 * c.pad - c.kernel + 1;
  const int k = c.kernel * c.kernel * c.channels;
  std::vector<float> out(static_cast<std::size_t>(n) * ho * wo * c.filters);
  auto at = [&](int s, int ch, int y, int x) -> float {
    if (y < 0 || y >= c.height || x < 0 || x >= c.width) return 0.0f;
    const std::size_t image = static_cast<std::size_t>(s) * c.channels * c.height * c.width;
    return c.chw_input ? in[image + (static_cast<std::size_t>(ch) * c.height + y) * c.width + x]
                       : in[image + (static_cast<std::size_t>(y) * c.width + x) * c.channels + ch];
  };
  for (int s = 0; s < n; ++s)
    for (int y = 0; y < ho; ++y)
      for (int x = 0; x < wo; ++x)
        for (int f = 0; f < c.filters; ++f) {
          double acc = w[static_cast<std::size_t>(c.filters) * k + f];
          for (int ky = 0; ky < c.kernel; ++ky)
            for (int kx = 0; kx < c.kernel; ++kx)
              for (int ch = 0; ch < c.channels; ++ch) {
                const int e = (ky * c.kernel + kx) * c.channels + ch;
                acc += w[static_cast<std::size_t>(e) * c.filters + f] *
                       at(s, ch, y + ky - c.pad, x + kx - c.pad);
              }
          if (c.relu) acc = std::max(acc, 0.0);
          out[((static_cast<std::size_t>(s) * ho + y) * wo + x) * c.filters + f] =
              static_cast<float>(acc);
        }
  return out;
}

const ConvConfig kCases[] = {
    {1, 8, 7, 3, 5, 2, true, true},    // one channel, planar, padded (lenet conv1-like)
    {3, 6, 5, 4, 3, 1, false, false},  // HWC interleaved, no ReLU
    {4, 7, 6, 5, 3, 0, true, false},   // interleaved, no padding
    {3, 6, 6, 4, 3, 1, true, true},    // CHW network input (cifar conv1-like)
};

}  // namespace

TEST_CASE("Conv2d forward equals a direct convolution", "[model][conv2d]") {
  for (const auto& config : kCases) {
    Conv2d layer(config);
    const int n = 3;
    GemmScratch gs;
    auto s = layer.make_scratch(n, gs);
    auto w = random_floats(layer.num_params(), -0.5f, 0.5f, 1);
    const auto x = random_floats(layer.input_size() * n, -1.0f, 1.0f, 2);
    std::vector<float> out(layer.output_size() * n);
    layer.forward(w.data(), x.data(), out.data(), n, *s, gs);
    const auto expect = direct_conv(config, w, x, n);
    INFO(layer.describe() << " on " << config.channels << "x" << config.height << "x"
                          << config.width);
    for (std::size_t i = 0; i < out.size(); ++i) REQUIRE(out[i] == Approx(expect[i]).margin(1e-5));
  }
}

TEST_CASE("Conv2d gradients match finite differences", "[model][conv2d]") {
  for (const auto& config : kCases) {
    Conv2d layer(config);
    const int n = 3;
    INFO(layer.describe() << " on " << config.channels << "x" << config.height << "x"
                          << config.width);
    const auto c = check_layer(layer, random_floats(layer.input_size() * n, -1.0f, 1.0f, 3), n,
                               {.coords = 60, .h = 1e-3f});
    require_passes(c.weights, "dW, db");
    require_passes(c.input, "dX");
  }
}

TEST_CASE("Conv2d splits large batches into im2col chunks", "[model][conv2d]") {
  // 1x28x28 with 5x5 kernels: 78 KB of im2col per sample, so 64 samples take several chunks;
  // chunked and one-sample-at-a-time results must agree.
  Conv2d layer(ConvConfig{1, 28, 28, 6, 5, 2, true, true});
  CHECK(layer.chunk(64) < 64);
  CHECK(layer.chunk(64) >= 1);
  const int n = 13;
  GemmScratch gs;
  auto big = layer.make_scratch(n, gs);
  auto w = random_floats(layer.num_params(), -0.3f, 0.3f, 4);
  const auto x = random_floats(layer.input_size() * n, 0.0f, 1.0f, 5);
  std::vector<float> out(layer.output_size() * n);
  layer.forward(w.data(), x.data(), out.data(), n, *big, gs);
  const auto expect = direct_conv(ConvConfig{1, 28, 28, 6, 5, 2, true, true}, w, x, n);
  for (std::size_t i = 0; i < out.size(); ++i) REQUIRE(out[i] == Approx(expect[i]).margin(1e-5));
}

TEST_CASE("Conv2d first-layer direct kernels match the im2col path", "[model][conv2d]") {
  // A first layer (CHW input, few channels) runs DirectConv, except that asking for dX (which
  // the network never does for its first layer) takes the im2col path: compare their dW.
  for (const auto& config :
       {ConvConfig{1, 28, 28, 6, 5, 2, true, true}, ConvConfig{3, 32, 32, 16, 3, 1, true, true},
        ConvConfig{2, 9, 40, 5, 3, 0, false, true}}) {
    Conv2d layer(config);
    const int n = 3;
    GemmScratch gs;
    auto s = layer.make_scratch(n, gs);
    const auto w = random_floats(layer.num_params(), -0.3f, 0.3f, 7);
    const auto x = random_floats(layer.input_size() * n, 0.0f, 1.0f, 8);
    std::vector<float> out(layer.output_size() * n);
    layer.forward(w.data(), x.data(), out.data(), n, *s, gs);
    const auto expect = direct_conv(config, w, x, n);
    for (std::size_t i = 0; i < out.size(); ++i) REQUIRE(out[i] == Approx(expect[i]).margin(1e-5));
    const auto r = random_floats(out.size(), -1.0f, 1.0f, 9);
    auto d1 = r;
    auto d2 = r;
    std::vector<float> g1(w.size()), g2(w.size()), din(x.size());
    layer.backward(w.data(), x.data(), out.data(), d1.data(), nullptr, g1.data(), n, *s, gs);
    layer.backward(w.data(), x.data(), out.data(), d2.data(), din.data(), g2.data(), n, *s, gs);
    INFO(layer.describe());
    for (std::size_t i = 0; i < g1.size(); ++i) REQUIRE(g1[i] == Approx(g2[i]).margin(1e-4));
  }
}
