#include "model/layers/im2col.hpp"

#include <algorithm>
#include <type_traits>

#include "model/simd.hpp"

namespace stalesgd::model {
namespace {

// One template per layout serves both directions: im2col copies input -> cols, the adjoint adds
// cols -> input. Only the constness of the two pointers differs.
template <bool kAdjoint>
using InPtr = std::conditional_t<kAdjoint, float*, const float*>;
template <bool kAdjoint>
using ColsPtr = std::conditional_t<kAdjoint, const float*, float*>;

using simd::kLanes;
using simd::Packet;
namespace ei = Eigen::internal;

// The copies here are a few dozen floats each (a patch row, an image row): inline register
// moves, with a masked last register, beat a call to memcpy/memset.
void copy_floats(float* dst, const float* src, int n) {
  simd::copy(dst, src, n);
}
void add_floats(float* dst, const float* src, int n) {
  int i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    ei::pstoreu(dst + i, ei::padd(ei::ploadu<Packet>(dst + i), ei::ploadu<Packet>(src + i)));
  }
  if (i < n) {
    simd::store_partial(
        dst + i, n - i,
        ei::padd(simd::load_partial(dst + i, n - i), simd::load_partial(src + i, n - i)));
  }
}
void zero_floats(float* dst, int n) {
  const Packet zero = ei::pset1<Packet>(0.0f);
  int i = 0;
  for (; i + kLanes <= n; i += kLanes) ei::pstoreu(dst + i, zero);
  if (i < n) simd::store_partial(dst + i, n - i, zero);
}

// Output columns xo whose input column xo + kx - pad lies inside [0, width).
struct Span {
  int begin;
  int end;
};
Span valid_span(const ConvGeometry& g, int kx) {
  const int begin = std::clamp(g.pad - kx, 0, g.out_w());
  const int end = std::clamp(g.width + g.pad - kx, begin, g.out_w());
  return {begin, end};
}

// Planar layout: for each patch entry (ky, kx, c), a column of m*P floats.
template <bool kAdjoint>
void planar(const ConvGeometry& g, InPtr<kAdjoint> in, int m, ColsPtr<kAdjoint> cols) {
  const int ho = g.out_h();
  const int wo = g.out_w();
  const std::size_t plane = static_cast<std::size_t>(g.height) * g.width;
  const std::size_t p = g.pixels();
  const std::size_t column = static_cast<std::size_t>(m) * p;
  for (int ky = 0; ky < g.kernel; ++ky) {
    for (int kx = 0; kx < g.kernel; ++kx) {
      const Span span = valid_span(g, kx);
      const int shift = kx - g.pad;  // input column = xo + shift
      for (int c = 0; c < g.channels; ++c) {
        const auto col = cols + ((ky * g.kernel + kx) * g.channels + c) * column;
        for (int s = 0; s < m; ++s) {
          const auto src_plane = in + (static_cast<std::size_t>(s) * g.channels + c) * plane;
          for (int yo = 0; yo < ho; ++yo) {
            const auto dst = col + s * p + static_cast<std::size_t>(yo) * wo;
            const int yi = yo + ky - g.pad;
            if (yi < 0 || yi >= g.height) {
              if constexpr (!kAdjoint) zero_floats(dst, wo);
              continue;
            }
            const auto src = src_plane + static_cast<std::size_t>(yi) * g.width;
            const int len = span.end - span.begin;
            if constexpr (kAdjoint) {
              add_floats(src + span.begin + shift, dst + span.begin, len);
            } else {
              zero_floats(dst, span.begin);
              copy_floats(dst + span.begin, src + span.begin + shift, len);
              zero_floats(dst + span.end, wo - span.end);
            }
          }
        }
      }
    }
  }
}

// Interleaved layout: for each output pixel, its patch of K floats.
template <bool kAdjoint>
void interleaved(const ConvGeometry& g, InPtr<kAdjoint> in, int m, ColsPtr<kAdjoint> cols) {
  const int ho = g.out_h();
  const int wo = g.out_w();
  const int c = g.channels;
  const int row = g.kernel * c;  // one patch row: k pixels of C channels
  const std::size_t k_patch = g.patch();
  for (int s = 0; s < m; ++s) {
    const auto image = in + static_cast<std::size_t>(s) * g.input_size();
    for (int yo = 0; yo < ho; ++yo) {
      for (int xo = 0; xo < wo; ++xo) {
        const auto patch = cols + ((static_cast<std::size_t>(s) * ho + yo) * wo + xo) * k_patch;
        const int xi0 = xo - g.pad;
        const bool inside_x = xi0 >= 0 && xi0 + g.kernel <= g.width;
        for (int ky = 0; ky < g.kernel; ++ky) {
          const auto dst = patch + ky * row;
          const int yi = yo + ky - g.pad;
          if (yi < 0 || yi >= g.height) {
            if constexpr (!kAdjoint) zero_floats(dst, row);
            continue;
          }
          const auto src_row = image + static_cast<std::size_t>(yi) * g.width * c;
          if (inside_x) {
            const auto src = src_row + static_cast<std::size_t>(xi0) * c;
            if constexpr (kAdjoint) {
              add_floats(src, dst, row);
            } else {
              copy_floats(dst, src, row);
            }
            continue;
          }
          for (int kx = 0; kx < g.kernel; ++kx) {
            const int xi = xi0 + kx;
            const auto d = dst + kx * c;
            if (xi < 0 || xi >= g.width) {
              if constexpr (!kAdjoint) zero_floats(d, c);
              continue;
            }
            const auto src = src_row + static_cast<std::size_t>(xi) * c;
            if constexpr (kAdjoint) {
              add_floats(src, d, c);
            } else {
              copy_floats(d, src, c);
            }
          }
        }
      }
    }
  }
}

}  // namespace

void im2col(const ConvGeometry& g, const float* in, int m, float* cols) {
  if (g.planar_layout()) {
    planar<false>(g, in, m, cols);
  } else {
    interleaved<false>(g, in, m, cols);
  }
}

void col2im(const ConvGeometry& g, const float* dcols, int m, float* din) {
  std::fill(din, din + static_cast<std::size_t>(m) * g.input_size(), 0.0f);
  if (g.planar_layout()) {
    planar<true>(g, din, m, dcols);
  } else {
    interleaved<true>(g, din, m, dcols);
  }
}

}  // namespace stalesgd::model
