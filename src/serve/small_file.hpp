// The most serve reads of a small file (summary.json, runs.csv, results.csv, workers.csv, the
// page's own files), all far smaller: a larger one is refused rather than loaded
// (docs/serve.md, "Limits"). Files are read through util/regular_file.hpp.
#pragma once

#include <cstddef>

#include "util/regular_file.hpp"

namespace stalesgd::serve {

inline constexpr std::size_t kMaxSmallFileBytes = std::size_t{16} << 20;

}  // namespace stalesgd::serve
