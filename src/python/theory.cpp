// stalesgd._core.theory: the runtime theory's prediction for a run's options, the one a run's
// summary.json records (docs/theory.md).
#include <pybind11/stl.h>

#include "python/bindings.hpp"
#include "stalesgd/config/resolved_run.hpp"
#include "stalesgd/theory/runtime.hpp"

namespace stalesgd::python {

namespace py = pybind11;

void bind_theory(py::module_& m) {
  m.def(
      "predict_runtime",
      [](const Settings& settings, std::uint64_t mc_iterations) -> py::object {
        auto resolved = ResolvedRun::resolve(options_from_settings(settings));
        if (!resolved) throw OptionError(resolved.error().message);
        std::optional<RuntimePrediction> p;
        {
          const py::gil_scoped_release release;
          p = predict_runtime(*resolved, mc_iterations);
        }
        if (!p) return py::none();
        py::dict d;
        d["seconds_per_iteration"] = p->seconds_per_iteration;
        d["method"] = to_string(p->method);
        d["formula"] = p->formula;
        d["upper_bound"] = p->upper_bound ? py::cast(*p->upper_bound) : py::none();
        if (p->monte_carlo) {
          py::dict mc;
          mc["seconds_per_iteration"] = p->monte_carlo->seconds;
          mc["ci95"] = p->monte_carlo->ci95;
          mc["iterations"] = p->monte_carlo->iterations;
          mc["mean_staleness"] = p->monte_carlo->mean_staleness;
          d["monte_carlo"] = mc;
        }
        return d;
      },
      py::arg("settings"), py::arg("mc_iterations") = 20000);
}

}  // namespace stalesgd::python
