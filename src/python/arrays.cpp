// A Dataset from the NumPy arrays python/stalesgd/_data.py checked (train(data=...) and
// theory(error=True, data=...); docs/python.md, "NumPy data").
#include <cstring>
#include <tuple>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "python/bindings.hpp"

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
  return d;
}

}  // namespace stalesgd::python
