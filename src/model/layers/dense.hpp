// Dense (fully connected) layer: y = W x + b, optionally followed by a ReLU (fused).
// Parameters: W (out x in, column-major: column p holds the weights from input p), then b (out).
// Forward Y = W X (one GEMM over the batch); backward dW = dY X^T, db = dY 1, dX = W^T dY.
// When it reads the network input, a sparse batch (mostly exact zeros, as MNIST) takes the
// SparseInput path instead of the GEMMs.
//
// Thread safety: as every Layer, immutable; scratch per thread.
#pragma once

#include "model/layers/layer.hpp"

namespace stalesgd::model {

struct DenseConfig {
  int in = 0;
  int out = 0;
  bool relu = false;
  bool reads_input = false;  // first layer: never needs dX; may take the sparse path
  bool allow_sparse = true;  // tests switch it off to compare the two paths
};

class Dense final : public Layer {
 public:
  // Input batches with at most this fraction of nonzeros take the sparse path. Measured on the
  // development machine (784-128 and 784-256 layers, batches 32 and 128, forward + backward):
  // the sparse path is 1.2-2x faster at MNIST's 19% and breaks even around 25-30%, so
  // Fashion-MNIST (about half nonzero) and CIFAR-10 take the GEMMs.
  static constexpr double kMaxSparseDensity = 0.25;
  // ... and only while the batch's output (out x n floats) stays in L1/L2 next to it: the
  // sparse forward pass updates it in place once per nonzero. Beyond 64 KB (e.g. 128 units x
  // 256 samples, an evaluation chunk) the GEMM wins again.
  static constexpr std::size_t kMaxSparseOutput = 16384;

  explicit Dense(DenseConfig config);

  std::string describe() const override;
  std::size_t input_size() const override { return config_.in; }
  std::size_t output_size() const override { return config_.out; }
  std::size_t num_weights() const override;
  std::size_t num_params() const override;
  // He-uniform before a ReLU, Glorot-uniform otherwise; biases 0.
  void init_params(float* w, Rng& rng) const override;
  std::unique_ptr<LayerScratch> make_scratch(int max_batch, GemmScratch& gemm) const override;
  void forward(const float* w, const float* in, float* out, int n, LayerScratch& s,
               GemmScratch& gemm) const override;
  void backward(const float* w, const float* in, const float* out, float* dout, float* din,
                float* dw, int n, LayerScratch& s, GemmScratch& gemm) const override;
  double flops(int n, bool with_din) const override;

 private:
  // Reads the network input, may skip its zeros, and is wide enough for SparseInput to pay.
  bool sparse_capable() const;
  // ... and n samples are few enough.
  bool sparse_fits(int n) const;

  DenseConfig config_;
};

}  // namespace stalesgd::model
