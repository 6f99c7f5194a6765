// Direct convolution for a network's first layer, which has few input channels (lenet's 1,
// cifar-cnn's 3): im2col would copy each input pixel k*k times and feed a GEMM with only
// C*k*k = 25 or 27 rows of depth. Instead each output row is computed in registers, one
// register per 16 output pixels, from shifted rows of a zero-padded copy of the input planes
// (output row y, filter f: sum over (c, ky, kx) of W[f, (ky, kx, c)] * in[c, y + ky - pad, . +
// kx - pad]), then written out HWC. The weight gradient runs the same loops with the output
// gradient in place of W: dW[f, (ky, kx, c)] = sum over samples, y, x of dY[f, y, x] *
// in[c, y + ky - pad, x + kx - pad].
//
// Thread safety: one DirectConv per thread (it lives in a layer's scratch).
#pragma once

#include <vector>

#include "model/buffer.hpp"
#include "model/layers/im2col.hpp"

namespace stalesgd::model {

class DirectConv {
 public:
  // Whether the direct kernels take this layer: planar (CHW) input of at most 4 channels and
  // output rows of at most 4 registers.
  static bool supports(const ConvGeometry& g);

  DirectConv(const ConvGeometry& g, int filters);

  // out (F x n*P, HWC) = max(0, .) if `relu` of the convolution of n samples of `in` (CHW) with
  // W (F x K) plus b (F).
  void forward(const float* w, const float* b, bool relu, const float* in, int n, float* out);

  // dW (F x K, overwritten) from n samples of `in` and dout (F x n*P, HWC).
  void weight_gradient(const float* in, const float* dout, int n, float* dw);

 private:
  void pad_input(const float* image);

  ConvGeometry g_;
  int filters_;
  int vectors_;                  // registers per output row
  int padded_h_;                 // rows of a padded input plane
  int stride_;                   // floats per padded row
  std::vector<int> tap_offset_;  // per patch entry (ky, kx, c): its offset in the padded planes
  Buffer input_;                 // one sample's zero-padded input planes
  int stride_out_;               // floats per planar output row (vectors_ registers)
  Buffer planes_;                // one sample's output, planar (filter, row, column)
  Buffer dplanes_;  // one sample's output gradient, planar; columns past out_w stay zero
  Buffer partial_;  // weight-gradient accumulators, one register per (f, tap)
};

}  // namespace stalesgd::model
