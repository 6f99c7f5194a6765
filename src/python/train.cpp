// stalesgd._core.train: one run into a folder, as `stalesgd train --out DIR` writes it
// (run_into_folder, which the CLI's train and every race run share), from options given as the
// CLI's --set texts and the data set named by them or given as NumPy arrays (docs/python.md).
#include <mutex>
#include <optional>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "python/bindings.hpp"
#include "stalesgd/config/resolved_run.hpp"
#include "stalesgd/data/catalog.hpp"
#include "stalesgd/engine/progress.hpp"
#include "stalesgd/experiment/run_folder.hpp"

namespace stalesgd::python {
namespace {

namespace py = pybind11;

// The latest progress sample, handed from the run's supervisor thread to the interpreter's.
class LatestProgress : public ProgressSink {
 public:
  void update(const ProgressSample& sample) override {
    const std::lock_guard lock(mu_);
    latest_ = sample;
  }
  std::optional<ProgressSample> take() {
    const std::lock_guard lock(mu_);
    return std::exchange(latest_, std::nullopt);
  }

 private:
  std::mutex mu_;
  std::optional<ProgressSample> latest_;  // guarded by mu_
};

py::dict summary_of(const FolderRun& run) {
  py::dict d;
  d["stop_reason"] = to_string(run.record.stop_reason);
  d["error"] = run.error;
  return d;
}

}  // namespace

void bind_train(py::module_& m) {
  m.def(
      "train",
      [](const Settings& settings, const std::vector<std::string>& command_line,
         const py::object& arrays, const py::object& on_progress) {
        TrainerOptions options = options_from_settings(settings);
        // As `train --out ''` is refused (tools/cli/train_args.cpp); without out= the package
        // gives a temporary folder.
        if (options.out_dir.empty()) {
          throw OptionError("--out '' names no folder; give one, e.g. --out runs/a");
        }
        if (!options.resume_dir.empty()) {
          throw OptionError(
              "resume: stalesgd.train starts runs; continue one from its checkpoint with the "
              "CLI: stalesgd train --resume DIR");
        }
        auto resolved = ResolvedRun::resolve(options);
        if (!resolved) throw OptionError(resolved.error().message);
        std::optional<Dataset> data;
        if (arrays.is_none()) {
          auto loaded = load_dataset(resolved->options().dataset, resolved->options().data_dir);
          if (!loaded) throw OptionError(loaded.error().message);
          data.emplace(std::move(loaded).value());
        } else {
          data.emplace(dataset_from_arrays(arrays, resolved->options().dataset));
        }
        // Set by the interpreter's thread on Ctrl-C, polled by the run; relaxed, as it carries no
        // data (as the CLI's flag, tools/cli/interrupt.cpp).
        std::atomic<bool> interrupt{false};
        LatestProgress progress;
        Result<FolderRun> ran = Error{""};
        const RunFolderOptions folder{
            .dir = resolved->options().out_dir,
            .existing = resolved->options().force ? ExistingRun::kOverwrite : ExistingRun::kRefuse,
            .command_line = command_line,
            .interrupt = &interrupt,
            .progress = on_progress.is_none() ? nullptr : &progress};
        run_interruptible([&] { ran = run_into_folder(*resolved, *data, folder); }, interrupt,
                          [&] {
                            if (on_progress.is_none()) return;
                            if (auto s = progress.take()) {
                              py::dict p;
                              p["t"] = s->t_s;
                              p["wall"] = s->wall_s;
                              p["iteration"] = s->iteration;
                              p["budget"] = s->budget ? py::cast(*s->budget) : py::none();
                              p["test_error"] =
                                  s->test_error ? py::cast(*s->test_error) : py::none();
                              on_progress(p);
                            }
                          });
        if (!ran) throw OptionError(ran.error().message);
        return summary_of(*ran);
      },
      py::arg("settings"), py::arg("command_line"), py::arg("arrays") = py::none(),
      py::arg("on_progress") = py::none());
}

}  // namespace stalesgd::python
