#include "model/layers/conv2d.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <Eigen/Core>

#include "model/buffer.hpp"
#include "model/init.hpp"
#include "model/layers/bias_relu.hpp"
#include "model/layers/direct_conv.hpp"

namespace stalesgd::model {
namespace {

// im2col panel budget: 512 KB, a quarter of this machine's 2 MB L2, so that the panel, the
// output chunk and the GEMM's packed blocks stay in L2 together.
constexpr std::size_t kPanelFloats = 128 * 1024;

struct ConvScratch final : LayerScratch {
  std::unique_ptr<DirectConv> direct;  // first layers with few channels (see direct_conv.hpp)
  int chunk = 1;                       // samples per im2col panel
  Buffer cols;                         // K x (chunk * P) or its transpose (planar layout)
  Buffer dcols;                        // same shape, for dX
  Buffer dwt;                          // dW^T (K x F), accumulated over the chunks
};

}  // namespace

Conv2d::Conv2d(ConvConfig config)
    : config_(config), geometry_{config.channels, config.height, config.width,
                                 config.kernel,   config.pad,    config.chw_input} {}

std::string Conv2d::describe() const {
  return fmt::format("conv{}x{}({}{}{})", config_.kernel, config_.kernel, config_.filters,
                     config_.pad > 0 ? fmt::format(",pad{}", config_.pad) : "",
                     config_.relu ? ",relu" : "");
}

std::size_t Conv2d::output_size() const {
  return static_cast<std::size_t>(config_.filters) * geometry_.pixels();
}

std::size_t Conv2d::num_weights() const {
  return static_cast<std::size_t>(config_.filters) * geometry_.patch();
}

std::size_t Conv2d::num_params() const {
  return num_weights() + config_.filters;
}

void Conv2d::init_params(float* w, Rng& rng) const {
  const std::size_t fan_in = geometry_.patch();
  const std::size_t fan_out =
      static_cast<std::size_t>(config_.filters) * config_.kernel * config_.kernel;
  fill_uniform(w, num_weights(), config_.relu ? he_limit(fan_in) : glorot_limit(fan_in, fan_out),
               rng);
  std::fill(w + num_weights(), w + num_params(), 0.0f);
}

int Conv2d::chunk(int max_batch) const {
  const std::size_t per_sample = static_cast<std::size_t>(geometry_.patch()) * geometry_.pixels();
  return static_cast<int>(std::clamp<std::size_t>(kPanelFloats / per_sample, 1, max_batch));
}

std::unique_ptr<LayerScratch> Conv2d::make_scratch(int max_batch, GemmScratch& gs) const {
  auto s = std::make_unique<ConvScratch>();
  if (DirectConv::supports(geometry_)) {
    s->direct = std::make_unique<DirectConv>(geometry_, config_.filters);
  }
  // The im2col path is also the direct layers' dX (only tests ask a first layer for it).
  const std::size_t k = geometry_.patch();
  s->chunk = chunk(max_batch);
  const std::size_t cols = static_cast<std::size_t>(s->chunk) * geometry_.pixels();
  s->cols.resize(k * cols);
  s->dcols.resize(k * cols);
  const std::size_t f = config_.filters;
  gs.reserve(f, cols, k);  // Y = W cols
  s->dwt.resize(k * f);
  gs.reserve(k, f, cols);  // dW^T = cols dY^T
  gs.reserve(k, cols, f);  // dcols = W^T dY (interleaved)
  gs.reserve(cols, k, f);  // dcols^T = dY^T W (planar)
  return s;
}

void Conv2d::forward(const float* w, const float* in, float* out, int n, LayerScratch& scratch,
                     GemmScratch& gs) const {
  auto& s = static_cast<ConvScratch&>(scratch);
  if (s.direct) {
    s.direct->forward(w, w + num_weights(), config_.relu, in, n, out);
    return;
  }
  const int f = config_.filters;
  const int k = geometry_.patch();
  const std::size_t p = geometry_.pixels();
  const int step = s.chunk;
  const bool planar = geometry_.planar_layout();
  for (int s0 = 0; s0 < n; s0 += step) {
    const int m = std::min(step, n - s0);
    const int cols = static_cast<int>(m * p);
    im2col(geometry_, in + s0 * input_size(), m, s.cols.data());
    float* y = out + s0 * output_size();
    std::fill(y, y + static_cast<std::size_t>(f) * cols, 0.0f);
    if (planar) {
      gemm(Op::kN, Op::kT, f, cols, k, 1.0f, w, f, s.cols.data(), cols, y, f, gs);
    } else {
      gemm(Op::kN, Op::kN, f, cols, k, 1.0f, w, f, s.cols.data(), k, y, f, gs);
    }
    // While the chunk is still in cache.
    add_bias_activation(y, w + num_weights(), f, static_cast<std::size_t>(cols), config_.relu);
  }
}

void Conv2d::backward(const float* w, const float* in, const float* out, float* dout, float* din,
                      float* dw, int n, LayerScratch& scratch, GemmScratch& gs) const {
  auto& s = static_cast<ConvScratch&>(scratch);
  const int f = config_.filters;
  const int k = geometry_.patch();
  const std::size_t p = geometry_.pixels();
  const int step = s.chunk;
  const bool planar = geometry_.planar_layout();
  const std::size_t total = static_cast<std::size_t>(n) * p;
  bias_relu_backward(out, dout, f, total, config_.relu, dw + num_weights());
  if (s.direct && din == nullptr) {
    s.direct->weight_gradient(in, dout, n, dw);
    return;
  }
  // dW^T = cols dY^T rather than dW = dY cols^T: the GEMM kernel is fast along the output's
  // contiguous dimension, here K (25..800) rather than F (6..64).
  std::fill(s.dwt.begin(), s.dwt.end(), 0.0f);
  for (int s0 = 0; s0 < n; s0 += step) {
    const int m = std::min(step, n - s0);
    const int cols = static_cast<int>(m * p);
    const float* dy = dout + s0 * output_size();
    im2col(geometry_, in + s0 * input_size(), m, s.cols.data());
    if (planar) {
      gemm(Op::kT, Op::kT, k, f, cols, 1.0f, s.cols.data(), cols, dy, f, s.dwt.data(), k, gs);
    } else {
      gemm(Op::kN, Op::kT, k, f, cols, 1.0f, s.cols.data(), k, dy, f, s.dwt.data(), k, gs);
    }
    if (din == nullptr) continue;
    std::fill(s.dcols.begin(), s.dcols.begin() + static_cast<std::size_t>(k) * cols, 0.0f);
    if (planar) {
      gemm(Op::kT, Op::kN, cols, k, f, 1.0f, dy, f, w, f, s.dcols.data(), cols, gs);
    } else {
      gemm(Op::kT, Op::kN, k, cols, f, 1.0f, w, f, dy, f, s.dcols.data(), k, gs);
    }
    col2im(geometry_, s.dcols.data(), m, din + s0 * input_size());
  }
  Eigen::Map<Eigen::MatrixXf>(dw, f, k) =
      Eigen::Map<const Eigen::MatrixXf>(s.dwt.data(), k, f).transpose();
}

double Conv2d::flops(int n, bool with_din) const {
  const double mac =
      static_cast<double>(config_.filters) * geometry_.patch() * geometry_.pixels() * n;
  return 2.0 * mac * (with_din ? 3 : 2);
}

}  // namespace stalesgd::model
