// 2-D convolution, stride 1, zero padding, optionally followed by a ReLU (fused), as im2col +
// GEMM over chunks of samples small enough that the im2col panel stays in L2.
// Parameters: W (F x K column-major, K = k*k*C patch entries ordered (ky, kx, c)), then b (F).
// Output: HWC, i.e. the F x (n*P) matrix Y = W cols + b.
// Backward: dW = dY cols^T, db = dY 1, dcols = W^T dY then col2im (cols recomputed per chunk
// rather than kept from the forward pass: the copy is cheap, the memory would not be).
//
// Thread safety: as every Layer, immutable; scratch per thread.
#pragma once

#include "model/layers/im2col.hpp"
#include "model/layers/layer.hpp"

namespace stalesgd::model {

struct ConvConfig {
  int channels = 1;  // input
  int height = 0;
  int width = 0;
  int filters = 1;
  int kernel = 5;
  int pad = 0;
  bool relu = true;
  bool chw_input = false;  // reads the network input (CHW) rather than a previous layer's HWC
};

class Conv2d final : public Layer {
 public:
  explicit Conv2d(ConvConfig config);

  std::string describe() const override;
  std::size_t input_size() const override { return geometry_.input_size(); }
  std::size_t output_size() const override;
  std::size_t num_weights() const override;
  std::size_t num_params() const override;
  // He-uniform (fan_in = k*k*C) before a ReLU, Glorot-uniform otherwise; biases 0.
  void init_params(float* w, Rng& rng) const override;
  std::unique_ptr<LayerScratch> make_scratch(int max_batch, GemmScratch& gs) const override;
  void forward(const float* w, const float* in, float* out, int n, LayerScratch& s,
               GemmScratch& gs) const override;
  void backward(const float* w, const float* in, const float* out, float* dout, float* din,
                float* dw, int n, LayerScratch& s, GemmScratch& gs) const override;
  double flops(int n, bool with_din) const override;

  const ConvGeometry& geometry() const { return geometry_; }
  // Samples per im2col chunk for a workspace of `max_batch`.
  int chunk(int max_batch) const;

 private:
  ConvConfig config_;
  ConvGeometry geometry_;
};

}  // namespace stalesgd::model
