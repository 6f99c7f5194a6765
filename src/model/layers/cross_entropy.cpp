#include "model/layers/cross_entropy.hpp"

#include <cmath>

#include <Eigen/Core>

namespace stalesgd::model {

void CrossEntropyScratch::reserve(int max_batch) {
  col_max.resize(static_cast<std::size_t>(max_batch));
  col_sum.resize(static_cast<std::size_t>(max_batch));
  col_scale.resize(static_cast<std::size_t>(max_batch));
}

CrossEntropySums softmax_cross_entropy(const float* logits, const std::uint8_t* labels, int classes,
                                       int n, float* dlogits, CrossEntropyScratch& s) {
  using Eigen::Index;
  Eigen::Map<const Eigen::ArrayXXf> z(logits, classes, n);
  Eigen::Map<Eigen::Array<float, 1, Eigen::Dynamic>> m(s.col_max.data(), n);
  Eigen::Map<Eigen::Array<float, 1, Eigen::Dynamic>> sum(s.col_sum.data(), n);
  m = z.colwise().maxCoeff();
  CrossEntropySums out;
  if (dlogits != nullptr) {
    Eigen::Map<Eigen::ArrayXXf> p(dlogits, classes, n);
    p = (z.rowwise() - m).exp();
    sum = p.colwise().sum();
    // Scale by 1 / (n * sum) through the scratch row: a plain array, so Eigen's rowwise product
    // needs no temporary (an expression here would be evaluated into a heap one).
    Eigen::Map<Eigen::Array<float, 1, Eigen::Dynamic>> scale(s.col_scale.data(), n);
    scale = (sum * static_cast<float>(n)).inverse();
    p.rowwise() *= scale;  // softmax / n
  } else {
    sum = (z.rowwise() - m).exp().colwise().sum();
  }
  const float inv_n = 1.0f / static_cast<float>(n);
  for (Index j = 0; j < n; ++j) {
    const int y = labels[j];
    out.loss += std::log(static_cast<double>(sum(j))) + m(j) - z(y, j);
    Index arg = 0;
    for (Index c = 1; c < classes; ++c) arg = z(c, j) > z(arg, j) ? c : arg;
    out.errors += arg != y ? 1 : 0;
    if (dlogits != nullptr) dlogits[j * classes + y] -= inv_n;
  }
  return out;
}

}  // namespace stalesgd::model
