#include "model/layers/maxpool.hpp"

#include <algorithm>

#include "model/simd.hpp"

namespace stalesgd::model {
namespace {

using simd::kLanes;
using simd::Packet;
namespace ei = Eigen::internal;

// Channels [ch, ch + lanes) of one pixel of c channels (a partial register at the end).
Packet load(const float* p, int ch, int c) {
  return simd::load_partial(p + ch, std::min(kLanes, c - ch));
}
void store(float* p, int ch, int c, const Packet& v) {
  simd::store_partial(p + ch, std::min(kLanes, c - ch), v);
}

// Channels covered by registers: all with masked partial registers; else whole registers
// only, the rest go scalar.
int vector_channels(int c) {
  return simd::kMasked ? c : c / kLanes * kLanes;
}

// One output row. The four inputs of output pixel xo, channel ch, are a0[2xo*C + ch],
// a0[(2xo+1)*C + ch] (input row 2y) and the same in a1 (row 2y + 1).
void pool_row(const float* a0, const float* a1, float* out, int c, int wo) {
  const int vc = vector_channels(c);
  for (int xo = 0; xo < wo; ++xo) {
    const float* p0 = a0 + 2 * xo * c;
    const float* p1 = a1 + 2 * xo * c;
    float* o = out + xo * c;
    for (int ch = 0; ch < vc; ch += kLanes) {
      const Packet top = ei::pmax(load(p0, ch, c), load(p0 + c, ch, c));
      const Packet bottom = ei::pmax(load(p1, ch, c), load(p1 + c, ch, c));
      store(o, ch, c, ei::pmax(top, bottom));
    }
    for (int ch = vc; ch < c; ++ch) {
      o[ch] = std::max(std::max(p0[ch], p0[ch + c]), std::max(p1[ch], p1[ch + c]));
    }
  }
}

// The gradient of one output row goes to the first of its four inputs (in the order (0,0),
// (0,1), (1,0), (1,1)) that equals the output. The max is exact, so this is the forward pass's
// argmax, found again instead of stored; first-wins matters, as MNIST's flat regions give
// equal activations.
void unpool_row(const float* a0, const float* a1, const float* out, const float* dout, float* g0,
                float* g1, int c, int wo) {
  const int vc = vector_channels(c);
  for (int xo = 0; xo < wo; ++xo) {
    const int base = 2 * xo * c;
    const float* o = out + xo * c;
    const float* d = dout + xo * c;
    for (int ch = 0; ch < vc; ch += kLanes) {
      const Packet top = load(o, ch, c);
      const Packet grad = load(d, ch, c);
      // Lane masks (all ones where true): hit_q = (input_q == max) and no earlier q hit.
      const Packet h00 = ei::pcmp_eq(load(a0 + base, ch, c), top);
      const Packet h01 = ei::pandnot(ei::pcmp_eq(load(a0 + base + c, ch, c), top), h00);
      Packet taken = ei::por(h00, h01);
      const Packet h10 = ei::pandnot(ei::pcmp_eq(load(a1 + base, ch, c), top), taken);
      taken = ei::por(taken, h10);
      store(g0 + base, ch, c, ei::pand(h00, grad));
      store(g0 + base + c, ch, c, ei::pand(h01, grad));
      store(g1 + base, ch, c, ei::pand(h10, grad));
      store(g1 + base + c, ch, c, ei::pandnot(grad, taken));
    }
    for (int ch = vc; ch < c; ++ch) {
      const bool h00 = a0[base + ch] == o[ch];
      const bool h01 = !h00 && a0[base + c + ch] == o[ch];
      const bool h10 = !h00 && !h01 && a1[base + ch] == o[ch];
      g0[base + ch] = h00 ? d[ch] : 0.0f;
      g0[base + c + ch] = h01 ? d[ch] : 0.0f;
      g1[base + ch] = h10 ? d[ch] : 0.0f;
      g1[base + c + ch] = h00 || h01 || h10 ? 0.0f : d[ch];
    }
  }
}

}  // namespace

MaxPool2::MaxPool2(PoolConfig config)
    : config_(config), out_h_(config.height / 2), out_w_(config.width / 2) {}

std::size_t MaxPool2::input_size() const {
  return static_cast<std::size_t>(config_.channels) * config_.height * config_.width;
}

std::size_t MaxPool2::output_size() const {
  return static_cast<std::size_t>(config_.channels) * out_h_ * out_w_;
}

std::unique_ptr<LayerScratch> MaxPool2::make_scratch(int, GemmScratch&) const {
  return std::make_unique<LayerScratch>();
}

void MaxPool2::forward(const float*, const float* in, float* out, int n, LayerScratch&,
                       GemmScratch&) const {
  const int c = config_.channels;
  const std::size_t row = static_cast<std::size_t>(config_.width) * c;
  const std::size_t out_row = static_cast<std::size_t>(out_w_) * c;
  for (int i = 0; i < n; ++i) {
    const float* image = in + i * input_size();
    for (int yo = 0; yo < out_h_; ++yo) {
      const float* a0 = image + 2 * yo * row;
      pool_row(a0, a0 + row, out, c, out_w_);
      out += out_row;
    }
  }
}

void MaxPool2::backward(const float*, const float* in, const float* out, float* dout, float* din,
                        float*, int n, LayerScratch&, GemmScratch&) const {
  if (din == nullptr) return;
  const int c = config_.channels;
  const std::size_t row = static_cast<std::size_t>(config_.width) * c;
  const std::size_t out_row = static_cast<std::size_t>(out_w_) * c;
  if (config_.height % 2 != 0 || config_.width % 2 != 0) {
    // Inputs outside every window get no gradient; clear all, the windows overwrite theirs.
    std::fill(din, din + static_cast<std::size_t>(n) * input_size(), 0.0f);
  }
  for (int i = 0; i < n; ++i) {
    const float* image = in + i * input_size();
    float* grad = din + i * input_size();
    for (int yo = 0; yo < out_h_; ++yo) {
      const std::size_t at = 2 * yo * row;
      unpool_row(image + at, image + at + row, out, dout, grad + at, grad + at + row, c, out_w_);
      out += out_row;
      dout += out_row;
    }
  }
}

}  // namespace stalesgd::model
