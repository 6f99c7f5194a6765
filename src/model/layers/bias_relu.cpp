#include "model/layers/bias_relu.hpp"

#include <algorithm>
#include <numeric>

#include <Eigen/Core>

#include "model/simd.hpp"

namespace stalesgd::model {
namespace {

// With fewer rows than a SIMD register holds (conv1's 6 channels), a column-wise loop would run
// mostly scalar. Instead the matrix is walked as one flat array in runs of kPeriod(rows) floats,
// a whole number of both columns and 16-float registers, against the bias repeated to that length.
constexpr int kMaxPeriod = 16 * 16;
int period(int rows) {
  return rows * (16 / std::gcd(rows, 16));
}

void fill_pattern(const float* b, int rows, int len, float* pattern) {
  for (int i = 0; i < len; ++i) pattern[i] = b[i % rows];
}

}  // namespace

void add_bias_activation(float* y, const float* b, int rows, std::size_t cols, bool relu) {
  const std::size_t size = static_cast<std::size_t>(rows) * cols;
  if (rows < 16) {
    alignas(64) float pattern[kMaxPeriod];
    const int len = period(rows);
    fill_pattern(b, rows, len, pattern);
    std::size_t i = 0;
    for (; i + len <= size; i += len) {
      float* p = y + i;
      if (relu) {
        for (int t = 0; t < len; ++t) p[t] = std::max(p[t] + pattern[t], 0.0f);
      } else {
        for (int t = 0; t < len; ++t) p[t] += pattern[t];
      }
    }
    for (int t = 0; i < size; ++i, ++t)
      y[i] = relu ? std::max(y[i] + pattern[t], 0.0f) : y[i] + pattern[t];
    return;
  }
  Eigen::Map<Eigen::MatrixXf> m(y, rows, static_cast<Eigen::Index>(cols));
  Eigen::Map<const Eigen::VectorXf> bias(b, rows);
  if (relu) {
    m = (m.colwise() + bias).cwiseMax(0.0f);
  } else {
    m.colwise() += bias;
  }
}

void relu_backward(const float* y, float* dy, std::size_t size) {
  Eigen::Map<const Eigen::ArrayXf> out(y, static_cast<Eigen::Index>(size));
  Eigen::Map<Eigen::ArrayXf> grad(dy, static_cast<Eigen::Index>(size));
  grad = (out > 0.0f).select(grad, 0.0f);
}

void bias_gradient(const float* dy, int rows, std::size_t cols, float* db) {
  const std::size_t size = static_cast<std::size_t>(rows) * cols;
  if (rows < 16) {
    // Same flat walk as add_bias_activation, then fold the period back onto the rows.
    alignas(64) float acc[kMaxPeriod] = {};
    const int len = period(rows);
    std::size_t i = 0;
    for (; i + len <= size; i += len) {
      for (int t = 0; t < len; ++t) acc[t] += dy[i + t];
    }
    for (int t = 0; i < size; ++i, ++t) acc[t] += dy[i];
    std::fill(db, db + rows, 0.0f);
    for (int t = 0; t < len; ++t) db[t % rows] += acc[t];
    return;
  }
  Eigen::Map<const Eigen::MatrixXf> g(dy, rows, static_cast<Eigen::Index>(cols));
  Eigen::Map<Eigen::VectorXf> bias(db, rows);
  bias.setZero();
  for (Eigen::Index j = 0; j < g.cols(); ++j) bias += g.col(j);
}

void bias_relu_backward(const float* y, float* dy, int rows, std::size_t cols, bool relu,
                        float* db) {
  using simd::kLanes;
  using simd::Packet;
  namespace ei = Eigen::internal;
  // Walk dy flat in runs of `len` floats, a whole number of both columns and registers, with
  // one accumulator register per position in the run; fold the run onto the rows at the end.
  constexpr int kMaxRun = 512;
  const int len = rows * (kLanes / std::gcd(rows, kLanes));
  if (len > kMaxRun) {
    if (relu) relu_backward(y, dy, static_cast<std::size_t>(rows) * cols);
    bias_gradient(dy, rows, cols, db);
    return;
  }
  alignas(64) Packet acc[kMaxRun / kLanes];
  const int registers = len / kLanes;
  for (int q = 0; q < registers; ++q) acc[q] = ei::pset1<Packet>(0.0f);
  const std::size_t size = static_cast<std::size_t>(rows) * cols;
  const Packet zero = ei::pset1<Packet>(0.0f);
  std::size_t i = 0;
  for (; i + len <= size; i += len) {
    for (int q = 0; q < registers; ++q) {
      float* d = dy + i + q * kLanes;
      Packet g = ei::ploadu<Packet>(d);
      if (relu) {
        g = ei::pand(ei::pcmp_lt(zero, ei::ploadu<Packet>(y + i + q * kLanes)), g);
        ei::pstoreu(d, g);
      }
      acc[q] = ei::padd(acc[q], g);
    }
  }
  alignas(64) float sums[kMaxRun];
  for (int q = 0; q < registers; ++q) ei::pstore(sums + q * kLanes, acc[q]);
  for (int t = 0; i < size; ++i, ++t) {  // the last, partial run
    if (relu && !(y[i] > 0.0f)) dy[i] = 0.0f;
    sums[t] += dy[i];
  }
  std::fill(db, db + rows, 0.0f);
  for (int t = 0; t < len; ++t) db[t % rows] += sums[t];
}

}  // namespace stalesgd::model
