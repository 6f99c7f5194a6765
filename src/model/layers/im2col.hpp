// im2col and its adjoint col2im for a stride-1 convolution with zero padding: they turn the
// convolution into one GEMM over a chunk of samples (Chellapilla et al. 2006).
// Patch entries are ordered (ky, kx, c), c fastest, in both layouts:
//  - interleaved (HWC input with C > 1): cols is K x (m*P) column-major, one patch per column;
//    a patch row of k*C floats is one contiguous copy from the input.
//  - planar (one channel, or the network's CHW input): cols is (m*P) x K column-major, one
//    shifted input plane per column; filled by row copies of the output width.
// K = k*k*C patch entries, P = out_h*out_w output pixels per sample, m samples.
#pragma once

#include <cstddef>

namespace stalesgd::model {

struct ConvGeometry {
  int channels = 1;
  int height = 0;
  int width = 0;
  int kernel = 1;
  int pad = 0;
  bool chw_input = false;  // the input is stored CHW (the network's input), not HWC

  int out_h() const { return height + 2 * pad - kernel + 1; }
  int out_w() const { return width + 2 * pad - kernel + 1; }
  int patch() const { return kernel * kernel * channels; }
  std::size_t pixels() const { return static_cast<std::size_t>(out_h()) * out_w(); }
  // Which cols layout (see above): planar for CHW input, and for one channel where CHW == HWC.
  bool planar_layout() const { return chw_input || channels == 1; }
  std::size_t input_size() const { return static_cast<std::size_t>(channels) * height * width; }
};

// Fills cols (K * m * P floats) from m samples of `in`.
void im2col(const ConvGeometry& g, const float* in, int m, float* cols);

// din (m samples, overwritten) = the adjoint of im2col applied to dcols: every entry of dcols
// is added back to the input position it was copied from.
void col2im(const ConvGeometry& g, const float* dcols, int m, float* din);

}  // namespace stalesgd::model
