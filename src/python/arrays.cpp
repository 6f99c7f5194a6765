// A Dataset from the NumPy arrays python/stalesgd/_data.py checked (train(data=...) and
// theory(error=True, data=...); docs/python.md, "NumPy data").
#include <cstring>
#include <span>
#include <string_view>
#include <tuple>

#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "python/bindings.hpp"
#include "util/crc32.hpp"

namespace stalesgd::python {
namespace {

namespace py = pybind11;

using FloatArray = py::array_t<float, py::array::c_style>;
using LabelArray = py::array_t<std::uint8_t, py::array::c_style>;

// x (N, dim) float32, y (N,) uint8. Copied: a Split owns its samples.
Split split_from(const FloatArray& x, const LabelArray& y, const ImageShape& shape) {
  Split s;
  s.shape = shape;
  s.count = static_cast<std::size_t>(y.shape(0));
  s.features.resize(s.count * shape.dim());
  s.labels.resize(s.count);
  std::memcpy(s.features.data(), x.data(), s.features.size() * sizeof(float));
  std::memcpy(s.labels.data(), y.data(), s.labels.size());
  return s;
}

// The arrays' identity, as a data set's files have theirs (Dataset::digest): the CRC-32 of the
// training split's samples and labels, then of the test split's with the shape and classes, so
// that a resumed run's checkpoint tells other arrays from its own (check_identity).
std::string arrays_digest(const Dataset& d) {
  const auto crc_of = [](const Split& s, std::uint32_t crc) {
    crc = crc32_of(std::string_view(reinterpret_cast<const char*>(s.features.data()),
                                    s.features.size() * sizeof(float)),
                   crc);
    return crc32_of(std::span<const std::uint8_t>(s.labels), crc);
  };
  const std::string shape = fmt::format("{}x{}x{}:{}", d.train.shape.channels, d.train.shape.height,
                                        d.train.shape.width, d.num_classes);
  return fmt::format("{:08x}{:08x}", crc_of(d.train, 0), crc_of(d.test, crc32_of(shape)));
}

}  // namespace

Dataset dataset_from_arrays(const py::object& arrays, const std::string& name) {
  // (x_train, y_train, x_test, y_test, (C, H, W), num_classes), checked in Python.
  const auto t = arrays.cast<py::tuple>();
  const auto shape = t[4].cast<std::tuple<int, int, int>>();
  const ImageShape image{std::get<0>(shape), std::get<1>(shape), std::get<2>(shape)};
  Dataset d;
  d.name = name;
  d.num_classes = t[5].cast<int>();
  d.train = split_from(t[0].cast<FloatArray>(), t[1].cast<LabelArray>(), image);
  d.test = split_from(t[2].cast<FloatArray>(), t[3].cast<LabelArray>(), image);
  d.digest = arrays_digest(d);
  return d;
}

}  // namespace stalesgd::python
