// Buffer: the 64-byte aligned float storage every model workspace is made of (one AVX-512
// register per cache line; Eigen's aligned_allocator uses EIGEN_MAX_ALIGN_BYTES).
#pragma once

#include <vector>

#include <Eigen/Core>

namespace stalesgd::model {

using Buffer = std::vector<float, Eigen::aligned_allocator<float>>;

}  // namespace stalesgd::model
