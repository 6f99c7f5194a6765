#include "model/layers/dense.hpp"

#include <algorithm>

#include <fmt/format.h>

#include <Eigen/Core>

#include "model/init.hpp"
#include "model/layers/bias_relu.hpp"
#include "model/layers/sparse_input.hpp"
#include "model/simd.hpp"

namespace stalesgd::model {
namespace {

// Fewer output rows than a SIMD register holds: the GEMMs are computed transposed (see
// forward()), and the sparse path does not pay.
constexpr int kNarrow = simd::kLanes;

struct DenseScratch final : LayerScratch {
  SparseInput sparse;
  bool used_sparse = false;  // which path the last forward took (backward follows it)
  Buffer yt;                 // narrow layers: Y^T (n x out)
  Buffer dwt;                // narrow layers: dW^T (in x out)
};

}  // namespace

Dense::Dense(DenseConfig config) : config_(config) {}

bool Dense::sparse_capable() const {
  return config_.reads_input && config_.allow_sparse && config_.out >= kNarrow;
}

bool Dense::sparse_fits(int n) const {
  return static_cast<std::size_t>(config_.out) * n <= kMaxSparseOutput;
}

std::string Dense::describe() const {
  return fmt::format("fc({}{})", config_.out, config_.relu ? ",relu" : "");
}

std::size_t Dense::num_weights() const {
  return static_cast<std::size_t>(config_.out) * config_.in;
}

std::size_t Dense::num_params() const {
  return num_weights() + config_.out;
}

void Dense::init_params(float* w, Rng& rng) const {
  const float limit = config_.relu ? he_limit(config_.in) : glorot_limit(config_.in, config_.out);
  fill_uniform(w, num_weights(), limit, rng);
  std::fill(w + num_weights(), w + num_params(), 0.0f);
}

std::unique_ptr<LayerScratch> Dense::make_scratch(int max_batch, GemmScratch& gs) const {
  auto s = std::make_unique<DenseScratch>();
  const int in = config_.in;
  const int out = config_.out;
  if (sparse_capable())
    s->sparse.reserve(std::min(max_batch, static_cast<int>(kMaxSparseOutput / out)), in, out);
  if (out < kNarrow) {
    s->yt.resize(static_cast<std::size_t>(max_batch) * out);
    s->dwt.resize(static_cast<std::size_t>(in) * out);
    gs.reserve(max_batch, out, in);  // Y^T = X^T W^T
    gs.reserve(in, out, max_batch);  // dW^T = X dY^T
  } else {
    gs.reserve(out, max_batch, in);  // Y = W X
    gs.reserve(out, in, max_batch);  // dW = dY X^T
  }
  gs.reserve(in, max_batch, out);  // dX = W^T dY (not needed by the first layer)
  return s;
}

void Dense::forward(const float* w, const float* in, float* out, int n, LayerScratch& scratch,
                    GemmScratch& gs) const {
  auto& s = static_cast<DenseScratch&>(scratch);
  const int rows = config_.out;
  const int k = config_.in;
  const float* bias = w + num_weights();
  s.used_sparse = sparse_capable() && sparse_fits(n) && s.sparse.compress(in, n, kMaxSparseDensity);
  if (s.used_sparse) {
    s.sparse.multiply(w, bias, config_.relu, out);
    return;
  }
  if (rows < kNarrow) {
    // A GEMM with fewer rows than a register runs mostly scalar; Y^T = X^T W^T has n rows.
    std::fill(s.yt.begin(), s.yt.begin() + static_cast<std::size_t>(n) * rows, 0.0f);
    gemm(Op::kT, Op::kT, n, rows, k, 1.0f, in, k, w, rows, s.yt.data(), n, gs);
    Eigen::Map<Eigen::MatrixXf>(out, rows, n) =
        Eigen::Map<const Eigen::MatrixXf>(s.yt.data(), n, rows).transpose();
  } else {
    std::fill(out, out + static_cast<std::size_t>(rows) * n, 0.0f);
    gemm(Op::kN, Op::kN, rows, n, k, 1.0f, w, rows, in, k, out, rows, gs);
  }
  add_bias_activation(out, bias, rows, static_cast<std::size_t>(n), config_.relu);
}

void Dense::backward(const float* w, const float* in, const float* out, float* dout, float* din,
                     float* dw, int n, LayerScratch& scratch, GemmScratch& gs) const {
  auto& s = static_cast<DenseScratch&>(scratch);
  const int rows = config_.out;
  const int k = config_.in;
  bias_relu_backward(out, dout, rows, static_cast<std::size_t>(n), config_.relu,
                     dw + num_weights());
  if (s.used_sparse) {
    s.sparse.weight_gradient(dout, dw);
  } else if (rows < kNarrow) {
    std::fill(s.dwt.begin(), s.dwt.end(), 0.0f);
    gemm(Op::kN, Op::kT, k, rows, n, 1.0f, in, k, dout, rows, s.dwt.data(), k, gs);
    Eigen::Map<Eigen::MatrixXf>(dw, rows, k) =
        Eigen::Map<const Eigen::MatrixXf>(s.dwt.data(), k, rows).transpose();
  } else {
    std::fill(dw, dw + num_weights(), 0.0f);
    gemm(Op::kN, Op::kT, rows, k, n, 1.0f, dout, rows, in, k, dw, rows, gs);
  }
  if (din != nullptr) {
    std::fill(din, din + static_cast<std::size_t>(k) * n, 0.0f);
    gemm(Op::kT, Op::kN, k, n, rows, 1.0f, w, rows, dout, rows, din, k, gs);
  }
}

double Dense::flops(int n, bool with_din) const {
  const double mac = static_cast<double>(config_.in) * config_.out * n;
  return 2.0 * mac * (with_din ? 3 : 2);
}

}  // namespace stalesgd::model
