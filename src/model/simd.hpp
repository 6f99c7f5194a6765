// The SIMD register type the kernels are written in (Eigen's packet for float: 16 lanes with
// AVX-512, 8 with AVX, 4 with SSE/NEON) and loads/stores of a partial register at the end of a
// row: masked where the ISA has masks (lanes past the end are neither read nor written, so a
// row may end its buffer), else through a zero-padded copy.
#pragma once

#include <algorithm>

#include <Eigen/Core>

// Eigen's packet types are vector types whose alignment attributes GCC drops (harmlessly) when
// they are template arguments; Eigen silences the same warning in its own headers.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"

namespace stalesgd::model::simd {

namespace ei = Eigen::internal;
using Packet = ei::packet_traits<float>::type;
inline constexpr int kLanes = ei::unpacket_traits<Packet>::size;

#if defined(EIGEN_VECTORIZE_AVX512) || defined(EIGEN_VECTORIZE_AVX)
inline constexpr bool kMasked = true;
using Mask = ei::unpacket_traits<Packet>::mask_t;
inline Mask first_lanes(int n) {
  return static_cast<Mask>((1u << n) - 1u);
}
#else
inline constexpr bool kMasked = false;
#endif

// The first n (1 <= n <= kLanes) floats at p; the other lanes read as 0.
inline Packet load_partial(const float* p, int n) {
  if (n == kLanes) return ei::ploadu<Packet>(p);
#if defined(EIGEN_VECTORIZE_AVX512) || defined(EIGEN_VECTORIZE_AVX)
  return ei::ploadu<Packet>(p, first_lanes(n));
#else
  alignas(64) float tmp[kLanes] = {};
  std::copy(p, p + n, tmp);
  return ei::pload<Packet>(tmp);
#endif
}

// Stores the first n (1 <= n <= kLanes) lanes of v at p.
inline void store_partial(float* p, int n, const Packet& v) {
  if (n == kLanes) return ei::pstoreu(p, v);
#if defined(EIGEN_VECTORIZE_AVX512) || defined(EIGEN_VECTORIZE_AVX)
  ei::pstoreu(p, v, first_lanes(n));
#else
  alignas(64) float tmp[kLanes];
  ei::pstore(tmp, v);
  std::copy(tmp, tmp + n, p);
#endif
}

// dst[0, n) = src[0, n) for short rows (a few dozen floats): inline register moves with a
// partial last register beat a call to memcpy.
inline void copy(float* dst, const float* src, int n) {
  int i = 0;
  for (; i + kLanes <= n; i += kLanes) ei::pstoreu(dst + i, ei::ploadu<Packet>(src + i));
  if (i < n) store_partial(dst + i, n - i, load_partial(src + i, n - i));
}

}  // namespace stalesgd::model::simd

#pragma GCC diagnostic pop
