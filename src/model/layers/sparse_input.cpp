#include "model/layers/sparse_input.hpp"

#include <algorithm>

#include <Eigen/Core>

#include "model/simd.hpp"
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace stalesgd::model {
namespace {

using simd::kLanes;
using simd::Packet;
namespace ei = Eigen::internal;

// Rows [r, r + lanes) of a column of `rows` floats (a partial register at the end).
Packet load_rows(const float* col, int r, int rows) {
  return simd::load_partial(col + r, std::min(kLanes, rows - r));
}
void store_rows(float* col, int r, int rows, const Packet& v) {
  simd::store_partial(col + r, std::min(kLanes, rows - r), v);
}

// The kernels below work on blocks of rows [r, r + kK registers); kK == 0 stands for the last,
// partial register of a column whose length is not a whole number of registers. Each block
// is its own function with its parameters by value, so they stay in registers.

// Register i of the block at row r of a column of `rows` floats.
template <int kK>
Packet load_block(const float* col, int r, int i, int rows) {
  if constexpr (kK == 0) {
    return load_rows(col, r, rows);
  } else {
    return ei::ploadu<Packet>(col + r + i * kLanes);
  }
}

// Rows [r, ...) of y = sum_t val[t] * m(:, idx[t]). With one or two registers per block, two
// sets of accumulators so that consecutive FMAs do not wait on each other.
template <int kK>
void gather_block(int r, const float* m, std::size_t ld, const int* idx, const float* val,
                  int count, int rows, float* y) {
  constexpr int kN = kK == 0 ? 1 : kK;  // registers in this block
  constexpr int kSets = kN <= 2 ? 2 : 1;
  Packet acc[kSets][kN];
  for (auto& set : acc) {
    for (auto& a : set) a = ei::pset1<Packet>(0.0f);
  }
  int t = 0;
  for (; t + kSets <= count; t += kSets) {
    for (int s = 0; s < kSets; ++s) {
      const float* col = m + static_cast<std::size_t>(idx[t + s]) * ld;
      const Packet v = ei::pset1<Packet>(val[t + s]);
      for (int i = 0; i < kN; ++i)
        acc[s][i] = ei::pmadd(v, load_block<kK>(col, r, i, rows), acc[s][i]);
    }
  }
  for (; t < count; ++t) {
    const float* col = m + static_cast<std::size_t>(idx[t]) * ld;
    const Packet v = ei::pset1<Packet>(val[t]);
    for (int i = 0; i < kN; ++i)
      acc[0][i] = ei::pmadd(v, load_block<kK>(col, r, i, rows), acc[0][i]);
  }
  for (int i = 0; i < kN; ++i) {
    Packet sum = acc[0][i];
    for (int s = 1; s < kSets; ++s) sum = ei::padd(sum, acc[s][i]);
    store_rows(y, r + i * kLanes, rows, sum);
  }
}

// Rows [r, ...) of y(:, idx[t]) += val[t] * x for every t, x in registers. y's leading
// dimension is a whole number of registers, so even the partial block updates y with full
// loads and stores: a load from a masked store cannot be forwarded and stalls until the store
// retires, and a column comes back as soon as the next feature.
template <int kK>
void scatter_block(int r, const float* x, int rows, const int* idx, const float* val, int count,
                   float* y, std::size_t ld) {
  constexpr int kN = kK == 0 ? 1 : kK;
  Packet xs[kN];
  for (int i = 0; i < kN; ++i) xs[i] = load_block<kK>(x, r, i, rows);
  for (int t = 0; t < count; ++t) {
    float* col = y + static_cast<std::size_t>(idx[t]) * ld + r;
    const Packet v = ei::pset1<Packet>(val[t]);
    for (int i = 0; i < kN; ++i) {
      ei::pstoreu(col + i * kLanes, ei::pmadd(v, xs[i], ei::ploadu<Packet>(col + i * kLanes)));
    }
  }
}

// y (rows floats) = sum_t val[t] * m(:, idx[t]), m column-major with leading dimension ld:
// one column of dW from the columns of dY at the samples that have the feature.
void gather(const float* m, std::size_t ld, const int* idx, const float* val, int count, int rows,
            float* y) {
  int r = 0;
  for (; r + 8 * kLanes <= rows; r += 8 * kLanes)
    gather_block<8>(r, m, ld, idx, val, count, rows, y);
  if (r + 4 * kLanes <= rows) gather_block<4>(r, m, ld, idx, val, count, rows, y), r += 4 * kLanes;
  if (r + 2 * kLanes <= rows) gather_block<2>(r, m, ld, idx, val, count, rows, y), r += 2 * kLanes;
  if (r + kLanes <= rows) gather_block<1>(r, m, ld, idx, val, count, rows, y), r += kLanes;
  if (r < rows) gather_block<0>(r, m, ld, idx, val, count, rows, y);
}

// y(:, idx[t]) += val[t] * x for every t: one feature's column of W (rows floats) into the
// columns of the samples that have the feature; y's leading dimension ld is padded.
void scatter(const float* x, int rows, const int* idx, const float* val, int count, float* y,
             std::size_t ld) {
  int r = 0;
  for (; r + 8 * kLanes <= rows; r += 8 * kLanes)
    scatter_block<8>(r, x, rows, idx, val, count, y, ld);
  if (r + 4 * kLanes <= rows) scatter_block<4>(r, x, rows, idx, val, count, y, ld), r += 4 * kLanes;
  if (r + 2 * kLanes <= rows) scatter_block<2>(r, x, rows, idx, val, count, y, ld), r += 2 * kLanes;
  if (r + kLanes <= rows) scatter_block<1>(r, x, rows, idx, val, count, y, ld), r += kLanes;
  if (r < rows) scatter_block<0>(r, x, rows, idx, val, count, y, ld);
}

int round_up(int rows) {
  return (rows + kLanes - 1) / kLanes * kLanes;
}

// Appends the nonzeros of x[0, dim) (their positions and values) at index/value; returns how
// many. Both arrays need 16 entries of slack past the last nonzero.
int compress_row(const float* x, int dim, int* index, float* value) {
  int count = 0;
  int p = 0;
#if defined(__AVX512F__)
  // vcompressps packs the nonzero lanes to the front of a register; store all 16, keep popcount.
  const __m512i step = _mm512_set1_epi32(16);
  __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512 zero = _mm512_setzero_ps();
  for (; p + 16 <= dim; p += 16) {
    const __m512 v = _mm512_loadu_ps(x + p);
    const __mmask16 nz = _mm512_cmp_ps_mask(v, zero, _CMP_NEQ_UQ);
    _mm512_storeu_ps(value + count, _mm512_maskz_compress_ps(nz, v));
    _mm512_storeu_si512(index + count, _mm512_maskz_compress_epi32(nz, lane));
    count += __builtin_popcount(nz);
    lane = _mm512_add_epi32(lane, step);
  }
#endif
  for (; p < dim; ++p) {
    // Branch-free: always write, advance only past a nonzero.
    index[count] = p;
    value[count] = x[p];
    count += x[p] != 0.0f ? 1 : 0;
  }
  return count;
}

constexpr int kSlack = 16;

}  // namespace

void SparseInput::reserve(int max_batch, int dim, int rows) {
  dim_ = dim;
  rows_ = rows;
  const std::size_t cap = static_cast<std::size_t>(max_batch) * dim + kSlack;
  sample_start_.resize(static_cast<std::size_t>(max_batch) + 1);
  index_.resize(cap);
  value_.resize(cap);
  feature_start_.resize(static_cast<std::size_t>(dim) + 2);
  sample_.resize(cap);
  feature_value_.resize(cap);
  const std::size_t ld = round_up(rows);
  if (ld != static_cast<std::size_t>(rows)) padded_.resize(ld * max_batch);
}

bool SparseInput::compress(const float* x, int n, double max_density) {
  if (n + 1 > static_cast<int>(sample_start_.size())) return false;
  const auto limit = static_cast<std::size_t>(max_density * static_cast<double>(n) * dim_);
  n_ = 0;
  std::size_t count = 0;
  sample_start_[0] = 0;
  for (int j = 0; j < n; ++j) {
    count += compress_row(x + static_cast<std::size_t>(j) * dim_, dim_, index_.data() + count,
                          value_.data() + count);
    sample_start_[j + 1] = static_cast<int>(count);
    // A dense batch shows in its first sample: give up before compressing the rest.
    if (count > limit || (j == 0 && count > 2 * limit / n)) return false;
  }
  n_ = n;
  // Counting sort of the nonzeros by feature: count into start[p + 2], prefix-sum so that
  // start[p + 1] is where feature p begins, then place with start[p + 1]++, which leaves
  // start[p + 1] at the end of feature p = the start of feature p + 1.
  int* start = feature_start_.data();
  std::fill(start, start + dim_ + 2, 0);
  for (std::size_t t = 0; t < count; ++t) ++start[index_[t] + 2];
  for (int p = 2; p < dim_ + 2; ++p) start[p] += start[p - 1];
  for (int j = 0; j < n; ++j) {
    for (int t = sample_start_[j]; t < sample_start_[j + 1]; ++t) {
      const int pos = start[index_[t] + 1]++;
      sample_[pos] = j;
      feature_value_[pos] = value_[t];
    }
  }
  return true;
}

void SparseInput::multiply(const float* w, const float* b, bool relu, float* y) {
  // Rows that do not fill whole registers are accumulated in a padded copy: the updates of y
  // are then full-register read-modify-writes (see scatter_block).
  const int rows = rows_;
  const int ld = round_up(rows);
  float* acc = ld == rows ? y : padded_.data();
  Eigen::Map<Eigen::MatrixXf> out(acc, ld, n_);
  out.topRows(rows).colwise() = Eigen::Map<const Eigen::VectorXf>(b, rows);
  out.bottomRows(ld - rows).setZero();
  const int* start = feature_start_.data();
  for (int p = 0; p < dim_; ++p) {
    const int count = start[p + 1] - start[p];
    if (count == 0) continue;
    scatter(w + static_cast<std::size_t>(p) * rows, rows, sample_.data() + start[p],
            feature_value_.data() + start[p], count, acc, static_cast<std::size_t>(ld));
  }
  Eigen::Map<Eigen::MatrixXf> result(y, rows, n_);
  if (relu) {
    result = out.topRows(rows).cwiseMax(0.0f);
  } else if (acc != y) {
    result = out.topRows(rows);
  }
}

void SparseInput::weight_gradient(const float* dy, float* dw) const {
  const int* start = feature_start_.data();
  for (int p = 0; p < dim_; ++p) {
    gather(dy, static_cast<std::size_t>(rows_), sample_.data() + start[p],
           feature_value_.data() + start[p], start[p + 1] - start[p], rows_,
           dw + static_cast<std::size_t>(p) * rows_);
  }
}

}  // namespace stalesgd::model
