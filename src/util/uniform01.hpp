// The one way the delays and the data partitions turn generator bits into a uniform number.
#pragma once

#include "stalesgd/util/seed.hpp"

namespace stalesgd {

// U uniform on the open interval (0, 1): the top 53 bits of one draw, centred in their cell,
// (k + 1/2) 2^-53. Never 0 or 1, so log(U), log1p(-U) and quantile(U) stay finite. Only the
// engine's bits enter, so a seed gives the same U on every platform (mt19937_64 is specified
// exactly by the standard).
inline double uniform01(Rng& rng) {
  return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
}

}  // namespace stalesgd
