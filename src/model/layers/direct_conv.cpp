#include "model/layers/direct_conv.hpp"

#include <algorithm>
#include <type_traits>

#include <Eigen/Core>

#include "model/simd.hpp"

namespace stalesgd::model {
namespace {

using simd::kLanes;
using simd::Packet;
namespace ei = Eigen::internal;

constexpr int kMaxChannels = 4;
constexpr int kMaxVectors = 4;

// Calls f(std::integral_constant<int, v>) for v in 1..kMaxVectors: the kernels below keep
// v registers per row and need v at compile time to keep them in registers.
template <class F>
void with_vectors(int v, F&& f) {
  switch (v) {
    case 1:
      return f(std::integral_constant<int, 1>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    case 3:
      return f(std::integral_constant<int, 3>{});
    default:
      return f(std::integral_constant<int, 4>{});
  }
}

// One output row of filters [f0, f0 + kF): acc = b + sum_t W[f, t] * (row at base + taps[t]).
// `out` is filter f0's planar row; the next filter's is `plane` floats further.
template <int kV, int kF>
void forward_block(const float* w, const float* b, int f0, int filters, const float* base,
                   const int* taps, int k, bool relu, float* out, std::size_t plane) {
  Packet acc[kF][kV];
  for (int f = 0; f < kF; ++f) {
    for (int v = 0; v < kV; ++v) acc[f][v] = ei::pset1<Packet>(b[f0 + f]);
  }
  for (int t = 0; t < k; ++t) {
    const float* row = base + taps[t];
    Packet x[kV];
    for (int v = 0; v < kV; ++v) x[v] = ei::ploadu<Packet>(row + v * kLanes);
    const float* wt = w + static_cast<std::size_t>(t) * filters + f0;
    for (int f = 0; f < kF; ++f) {
      const Packet wf = ei::pset1<Packet>(wt[f]);
      for (int v = 0; v < kV; ++v) acc[f][v] = ei::pmadd(wf, x[v], acc[f][v]);
    }
  }
  for (int f = 0; f < kF; ++f) {
    for (int v = 0; v < kV; ++v) {
      const Packet r = relu ? ei::pmax(acc[f][v], ei::pset1<Packet>(0.0f)) : acc[f][v];
      ei::pstoreu(out + f * plane + v * kLanes, r);
    }
  }
}

// Adds to the accumulators of filters [f0, f0 + kF) x taps [t0, t0 + kT) one sample's
// sum over rows y and columns of dY[f, y, .] * (input row at y * stride + taps[t]).
template <int kV, int kF, int kT>
void gradient_block(const float* dplanes, std::size_t plane, int stride_out, const float* input,
                    int stride, int rows, const int* taps, int f0, int t0, int k, Packet* partial) {
  Packet acc[kF][kT];
  for (int f = 0; f < kF; ++f) {
    for (int t = 0; t < kT; ++t) acc[f][t] = partial[(f0 + f) * k + t0 + t];
  }
  for (int y = 0; y < rows; ++y) {
    Packet d[kF][kV];
    for (int f = 0; f < kF; ++f) {
      const float* drow = dplanes + (f0 + f) * plane + static_cast<std::size_t>(y) * stride_out;
      for (int v = 0; v < kV; ++v) d[f][v] = ei::ploadu<Packet>(drow + v * kLanes);
    }
    const float* base = input + static_cast<std::size_t>(y) * stride;
    for (int t = 0; t < kT; ++t) {
      const float* row = base + taps[t0 + t];
      for (int v = 0; v < kV; ++v) {
        const Packet x = ei::ploadu<Packet>(row + v * kLanes);
        for (int f = 0; f < kF; ++f) acc[f][t] = ei::pmadd(d[f][v], x, acc[f][t]);
      }
    }
  }
  for (int f = 0; f < kF; ++f) {
    for (int t = 0; t < kT; ++t) partial[(f0 + f) * k + t0 + t] = acc[f][t];
  }
}

}  // namespace

bool DirectConv::supports(const ConvGeometry& g) {
  const int vectors = (g.out_w() + kLanes - 1) / kLanes;
  return g.planar_layout() && g.channels <= kMaxChannels && vectors <= kMaxVectors;
}

DirectConv::DirectConv(const ConvGeometry& g, int filters)
    : g_(g),
      filters_(filters),
      vectors_((g.out_w() + kLanes - 1) / kLanes),
      padded_h_(g.height + 2 * g.pad),
      stride_(vectors_ * kLanes + g.kernel - 1),
      stride_out_(vectors_ * kLanes) {
  // Borders are zero once and for all: pad_input only ever writes the interior.
  input_.assign(static_cast<std::size_t>(g.channels) * padded_h_ * stride_ + kLanes, 0.0f);
  const std::size_t plane = static_cast<std::size_t>(g.out_h()) * stride_out_;
  planes_.assign(static_cast<std::size_t>(filters) * plane, 0.0f);
  dplanes_.assign(static_cast<std::size_t>(filters) * plane, 0.0f);
  partial_.resize(static_cast<std::size_t>(filters) * g.patch() * kLanes);
  for (int ky = 0; ky < g.kernel; ++ky) {
    for (int kx = 0; kx < g.kernel; ++kx) {
      for (int c = 0; c < g.channels; ++c) {
        tap_offset_.push_back((c * padded_h_ + ky) * stride_ + kx);  // entry (ky*k + kx)*C + c
      }
    }
  }
}

void DirectConv::pad_input(const float* image) {
  const std::size_t plane = static_cast<std::size_t>(g_.height) * g_.width;
  for (int c = 0; c < g_.channels; ++c) {
    for (int y = 0; y < g_.height; ++y) {
      simd::copy(input_.data() + (c * padded_h_ + y + g_.pad) * stride_ + g_.pad,
                 image + c * plane + static_cast<std::size_t>(y) * g_.width, g_.width);
    }
  }
}

void DirectConv::forward(const float* w, const float* b, bool relu, const float* in, int n,
                         float* out) {
  const int ho = g_.out_h();
  const int wo = g_.out_w();
  const int k = g_.patch();
  const std::size_t plane = static_cast<std::size_t>(ho) * stride_out_;
  const std::size_t out_size = static_cast<std::size_t>(filters_) * ho * wo;
  for (int s = 0; s < n; ++s) {
    pad_input(in + s * g_.input_size());
    with_vectors(vectors_, [&](auto v) {
      constexpr int kV = decltype(v)::value;
      constexpr int kBlock = kV <= 2 ? 8 : 4;  // kBlock * kV accumulators stay in registers
      for (int y = 0; y < ho; ++y) {
        const float* base = input_.data() + static_cast<std::size_t>(y) * stride_;
        float* row = planes_.data() + static_cast<std::size_t>(y) * stride_out_;
        const int* taps = tap_offset_.data();
        int f = 0;
        for (; f + kBlock <= filters_; f += kBlock) {
          forward_block<kV, kBlock>(w, b, f, filters_, base, taps, k, relu, row + f * plane, plane);
        }
        if (f + 4 <= filters_) {
          forward_block<kV, 4>(w, b, f, filters_, base, taps, k, relu, row + f * plane, plane);
          f += 4;
        }
        if (f + 2 <= filters_) {
          forward_block<kV, 2>(w, b, f, filters_, base, taps, k, relu, row + f * plane, plane);
          f += 2;
        }
        if (f < filters_) {
          forward_block<kV, 1>(w, b, f, filters_, base, taps, k, relu, row + f * plane, plane);
        }
      }
    });
    // Planar rows -> HWC: output pixel (y, x) is the column of F floats at (y * wo + x) * F.
    float* image = out + s * out_size;
    for (int y = 0; y < ho; ++y) {
      Eigen::Map<Eigen::MatrixXf>(image + static_cast<std::size_t>(y) * wo * filters_, filters_,
                                  wo) =
          Eigen::Map<const Eigen::MatrixXf, 0, Eigen::OuterStride<>>(
              planes_.data() + static_cast<std::size_t>(y) * stride_out_, wo, filters_,
              Eigen::OuterStride<>(static_cast<Eigen::Index>(plane)))
              .transpose();
    }
  }
}

void DirectConv::weight_gradient(const float* in, const float* dout, int n, float* dw) {
  const int ho = g_.out_h();
  const int wo = g_.out_w();
  const int k = g_.patch();
  const std::size_t plane = static_cast<std::size_t>(ho) * stride_out_;
  const std::size_t out_size = static_cast<std::size_t>(filters_) * ho * wo;
  auto* partial = reinterpret_cast<Packet*>(partial_.data());
  std::fill(partial_.begin(), partial_.end(), 0.0f);
  for (int s = 0; s < n; ++s) {
    pad_input(in + s * g_.input_size());
    // HWC -> planar rows; the columns past wo stay zero, so they add nothing below.
    const float* grad = dout + s * out_size;
    for (int y = 0; y < ho; ++y) {
      Eigen::Map<Eigen::MatrixXf, 0, Eigen::OuterStride<>>(
          dplanes_.data() + static_cast<std::size_t>(y) * stride_out_, wo, filters_,
          Eigen::OuterStride<>(static_cast<Eigen::Index>(plane))) =
          Eigen::Map<const Eigen::MatrixXf>(grad + static_cast<std::size_t>(y) * wo * filters_,
                                            filters_, wo)
              .transpose();
    }
    with_vectors(vectors_, [&](auto v) {
      constexpr int kV = decltype(v)::value;
      const int* taps = tap_offset_.data();
      for (int f = 0; f < filters_; f += 2) {
        const bool pair = f + 1 < filters_;
        int t = 0;
        for (; t + 8 <= k; t += 8) {
          if (pair) {
            gradient_block<kV, 2, 8>(dplanes_.data(), plane, stride_out_, input_.data(), stride_,
                                     ho, taps, f, t, k, partial);
          } else {
            gradient_block<kV, 1, 8>(dplanes_.data(), plane, stride_out_, input_.data(), stride_,
                                     ho, taps, f, t, k, partial);
          }
        }
        for (; t < k; ++t) {
          if (pair) {
            gradient_block<kV, 2, 1>(dplanes_.data(), plane, stride_out_, input_.data(), stride_,
                                     ho, taps, f, t, k, partial);
          } else {
            gradient_block<kV, 1, 1>(dplanes_.data(), plane, stride_out_, input_.data(), stride_,
                                     ho, taps, f, t, k, partial);
          }
        }
      }
    });
  }
  for (int f = 0; f < filters_; ++f) {
    for (int t = 0; t < k; ++t)
      dw[static_cast<std::size_t>(t) * filters_ + f] = ei::predux(partial[f * k + t]);
  }
}

}  // namespace stalesgd::model
