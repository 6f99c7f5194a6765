#include "stalesgd/data/holdout.hpp"

#include <fmt/format.h>

namespace stalesgd {

namespace {

Split rows_of(const Split& from, std::size_t first, std::size_t n) {
  Split to;
  to.shape = from.shape;
  to.count = n;
  const auto features = from.rows(first, n);
  const auto labels = from.label_rows(first, n);
  to.features.assign(features.begin(), features.end());
  to.labels.assign(labels.begin(), labels.end());
  return to;
}

}  // namespace

Result<Dataset> with_holdout(const Dataset& data, std::size_t n) {
  if (n >= data.train.count) {
    return Error{fmt::format("--holdout {} leaves no training sample: {} has {}", n, data.name,
                             data.train.count)};
  }
  Dataset out;
  out.name = data.name;
  out.num_classes = data.num_classes;
  out.digest = data.digest;
  out.test = data.test;
  const std::size_t kept = data.train.count - n;
  out.train = rows_of(data.train, 0, kept);
  out.val = rows_of(data.train, kept, n);
  return out;
}

}  // namespace stalesgd
