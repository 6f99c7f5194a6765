// The extension module stalesgd._core: the C++ engine under the Python package of python/stalesgd/
// (docs/python.md). Each concept binds itself in a file of its own.
#include <dlfcn.h>

#include <pybind11/pybind11.h>

#include "python/bindings.hpp"
#include "stalesgd/version.hpp"

namespace {

// A plug-in (plugin=) calls register_rule and the like, which it binds by name: in the stalesgd
// program to the program's own, whose registries the runs read. Python loads this module
// RTLD_LOCAL, and the plug-in would bind to libstalesgd.so, its link-time dependency, with
// registries of its own that no run of this module reads. Made global, this module's library
// comes first for the plug-ins loaded after it.
void offer_library_to_plugins() {
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&offer_library_to_plugins), &self) != 0 &&
      self.dli_fname != nullptr) {
    dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
  }
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  offer_library_to_plugins();
  m.doc() = "stalesgd's C++ engine; use the package stalesgd, not this module";
  pybind11::register_exception<stalesgd::python::OptionError>(m, "Error", PyExc_ValueError);
  m.attr("__version__") = std::string(stalesgd::version());
  stalesgd::python::bind_train(m);
  stalesgd::python::bind_race(m);
  stalesgd::python::bind_theory(m);
}
