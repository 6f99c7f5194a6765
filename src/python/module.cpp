// The extension module stalesgd._core: the C++ engine under the Python package of python/stalesgd/
// (docs/python.md). Each concept binds itself in a file of its own.
#include <pybind11/pybind11.h>

#include "python/bindings.hpp"
#include "stalesgd/version.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "stalesgd's C++ engine; use the package stalesgd, not this module";
  pybind11::register_exception<stalesgd::python::OptionError>(m, "Error", PyExc_ValueError);
  m.attr("__version__") = std::string(stalesgd::version());
  stalesgd::python::bind_train(m);
  stalesgd::python::bind_race(m);
  stalesgd::python::bind_theory(m);
}
