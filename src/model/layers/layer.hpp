// Layer: one stage of a Network (dense, conv2d, maxpool), over a slice of the flat parameter
// vector. Activations of a batch of n samples are column-major (features x n) matrices; an
// image's features are ordered HWC (channels fastest), so a conv activation is the matrix
// C x (n*H*W) and flattening it for a dense layer costs nothing. The network's input is the
// data set's CHW rows; only the first layer reads it, and for one channel CHW == HWC.
//
// Thread safety: a Layer is immutable after construction; forward and backward are const and
// may run on any number of threads at once, each with its own LayerScratch and GemmScratch.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "model/gemm.hpp"
#include "stalesgd/util/seed.hpp"

namespace stalesgd::model {

// A layer's per-thread scratch (im2col panels, pooling switches, ...); sized for a max batch.
class LayerScratch {
 public:
  virtual ~LayerScratch() = default;
};

class Layer {
 public:
  virtual ~Layer() = default;

  virtual std::string describe() const = 0;     // e.g. "conv5x5(6)", "fc(128)"
  virtual std::size_t input_size() const = 0;   // floats per sample
  virtual std::size_t output_size() const = 0;  // floats per sample

  // The layer's slice of the flat vector is its weights (L2-regularised) then its biases.
  virtual std::size_t num_weights() const { return 0; }
  virtual std::size_t num_params() const { return 0; }
  virtual void init_params(float* /*w*/, Rng& /*rng*/) const {}

  // Scratch for up to `max_batch` samples; also reserves this layer's products in `gs`.
  virtual std::unique_ptr<LayerScratch> make_scratch(int max_batch, GemmScratch& gs) const = 0;

  // out (output_size x n) = f(in; w).
  virtual void forward(const float* w, const float* in, float* out, int n, LayerScratch& s,
                       GemmScratch& gs) const = 0;

  // Given dL/d(out) in `dout` (the layer may overwrite it), writes dL/dw into `dw` (all
  // num_params() entries overwritten) and, when `din` is non-null, dL/d(in). `in` and `out` are
  // the values of the last forward() with the same scratch.
  virtual void backward(const float* w, const float* in, const float* out, float* dout, float* din,
                        float* dw, int n, LayerScratch& s, GemmScratch& gs) const = 0;

  // Floating-point operations of forward + backward on n samples: 2 per multiply-add of the
  // matrix products (elementwise work is not counted), without the din product when !with_din.
  virtual double flops(int n, bool with_din) const = 0;
};

}  // namespace stalesgd::model
