// 2x2 max pooling with stride 2 on HWC activations (floor: an odd last row or column is
// dropped). Backward routes each output gradient to the input that won (the first of equal
// ones) and zero to the other three; the winner is found again from the input and output
// rather than stored, which keeps both passes vectorised over the channels.
//
// Thread safety: as every Layer, immutable; no state at all.
#pragma once

#include "model/layers/layer.hpp"

namespace stalesgd::model {

struct PoolConfig {
  int channels = 1;
  int height = 0;
  int width = 0;
};

class MaxPool2 final : public Layer {
 public:
  explicit MaxPool2(PoolConfig config);

  std::string describe() const override { return "maxpool2"; }
  std::size_t input_size() const override;
  std::size_t output_size() const override;
  std::unique_ptr<LayerScratch> make_scratch(int max_batch, GemmScratch& gs) const override;
  void forward(const float* w, const float* in, float* out, int n, LayerScratch& s,
               GemmScratch& gs) const override;
  void backward(const float* w, const float* in, const float* out, float* dout, float* din,
                float* dw, int n, LayerScratch& s, GemmScratch& gs) const override;
  double flops(int, bool) const override { return 0.0; }

 private:
  PoolConfig config_;
  int out_h_;
  int out_w_;
};

}  // namespace stalesgd::model
