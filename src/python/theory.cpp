// stalesgd._core's theory: the runtime theory's prediction for a run's options, the one a run's
// summary.json records; the error bounds at wallclock budgets, as `stalesgd theory --error
// --json` prints them; and the delay families fitted to measured durations, as `stalesgd theory
// --fit` fits them (docs/theory.md).
#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "python/bindings.hpp"
#include "stalesgd/config/resolved_run.hpp"
#include "stalesgd/data/catalog.hpp"
#include "stalesgd/straggler/duration.hpp"
#include "stalesgd/theory/delay_fit.hpp"
#include "stalesgd/theory/error_prediction.hpp"
#include "stalesgd/theory/runtime.hpp"
#include "theory/error_prediction_json.hpp"

namespace stalesgd::python {

namespace py = pybind11;

namespace {

// stalesgd.theory's keywords of its own (python/stalesgd/_theory.py), for the closest key.
const std::vector<std::string> kTheoryKeys{
    "samples", "error", "budgets", "constants_samples", "optimum_epochs", "p0", "gamma", "data"};

TrainerOptions theory_options(const Settings& settings) {
  return options_from_settings(settings, "theory", kTheoryKeys);
}

bool given(const Settings& settings, std::string_view key) {
  return std::any_of(settings.begin(), settings.end(),
                     [&](const auto& s) { return s.first == key; });
}

// The request `theory --error` builds from its flags, from the option table's keys: the rule is
// K-sync and K is swept unless given, as there.
ErrorRequest error_request(const Settings& settings, const TrainerOptions& o,
                           const std::vector<std::string>& budgets) {
  ErrorRequest q;
  q.rule = given(settings, "rule") ? o.rule : RuleSpec{"", 0, {}};
  if (!given(settings, "k")) q.rule.k = 0;
  q.workers = o.workers;
  q.delay = o.delay;
  q.delay_mode = o.delay_mode;
  q.seed = o.seed;
  q.model = o.model;
  q.lr = o.lr;
  q.batch = o.batch;
  for (const auto& text : budgets) {
    auto d = parse_duration(text);
    if (!d || !(*d > 0.0)) {
      throw OptionError(
          fmt::format("budgets: '{}' is not a positive duration; give seconds or "
                      "durations like 1s, 10s, 60s",
                      text));
    }
    q.budgets.push_back(*d);
  }
  return q;
}

}  // namespace

void bind_theory(py::module_& m) {
  m.def(
      "predict_errors",
      [](const Settings& settings, const py::object& arrays,
         const std::vector<std::string>& budgets, std::uint64_t samples,
         std::size_t constants_samples, int optimum_epochs, std::optional<double> p0,
         std::optional<double> gamma) -> py::object {
        const TrainerOptions o = theory_options(settings);
        ErrorRequest q = error_request(settings, o, budgets);
        q.samples = samples;
        q.constants_samples = constants_samples;
        q.optimum_epochs = optimum_epochs;
        q.p0 = p0;
        q.gamma = gamma;
        if (auto s = check_error_request(q); !s) throw OptionError(s.error().message);
        std::optional<Dataset> data;
        if (arrays.is_none()) {
          auto loaded = load_dataset(o.dataset, o.data_dir);
          if (!loaded) throw OptionError(loaded.error().message);
          data.emplace(std::move(loaded).value());
        } else {
          data.emplace(dataset_from_arrays(arrays, "npz:(numpy arrays)"));
        }
        Result<ErrorPrediction> p = Error{""};
        {
          const py::gil_scoped_release release;
          p = predict_errors(q, *data);
        }
        if (!p) throw OptionError(p.error().message);
        // The CLI's JSON, read by Python's own parser: the same keys and values.
        return py::module_::import("json").attr("loads")(error_prediction_json(*p).dump());
      },
      py::arg("settings"), py::arg("arrays"), py::arg("budgets"), py::arg("samples"),
      py::arg("constants_samples"), py::arg("optimum_epochs"), py::arg("p0"), py::arg("gamma"));
  m.def(
      "predict_runtime",
      [](const Settings& settings, std::uint64_t mc_iterations) -> py::object {
        auto resolved = ResolvedRun::resolve(theory_options(settings));
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
