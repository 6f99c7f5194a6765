// stalesgd._core's theory: the runtime theory's prediction for a run's options, the one a run's
// summary.json records, and the delay families fitted to measured durations, as `stalesgd theory
// --fit` fits them (docs/theory.md).
#include <pybind11/stl.h>

#include "python/bindings.hpp"
#include "stalesgd/config/resolved_run.hpp"
#include "stalesgd/theory/delay_fit.hpp"
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
  m.def(
      "fit_delays",
      [](const std::vector<double>& durations) {
        auto fit = fit_delays(durations);
        if (!fit) throw OptionError(fit.error().message);
        py::list families;
        for (const auto& f : fit->families) {
          py::dict d;
          d["family"] = f.family;
          d["fitted"] = f.fitted;
          d["not_fitted"] = f.not_fitted;
          py::dict parameters;
          for (const auto& p : f.parameters) parameters[py::str(p.name)] = p.value;
          d["parameters"] = parameters;
          d["log_likelihood"] = f.log_likelihood;
          d["aic"] = f.aic;
          d["spec"] = f.spec;
          families.append(d);
        }
        py::dict out;
        out["n"] = fit->n;
        out["mean_s"] = fit->mean_s;
        out["min_s"] = fit->min_s;
        out["median_s"] = fit->median_s;
        out["max_s"] = fit->max_s;
        out["families"] = families;
        out["chosen"] = fit->best().family;
        out["spec"] = fit->best().spec;
        return out;
      },
      py::arg("durations"));
}

}  // namespace stalesgd::python
