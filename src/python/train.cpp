// stalesgd._core.train: one run into a folder, as `stalesgd train --out DIR` writes it
// (run_into_folder, which the CLI's train and every race run share), from options given as the
// CLI's --set texts and the data set named by them or given as NumPy arrays; or, with resume,
// the run a checkpoint holds continued, as `stalesgd train --resume DIR` does (docs/python.md).
#include <algorithm>
#include <mutex>
#include <optional>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "experiment/resume_options.hpp"
#include "output/model_file.hpp"
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

// The data set name python/stalesgd/_train.py gives NumPy arrays (data=).
constexpr std::string_view kArraysDataset = "npz:(numpy arrays)";

// The flags of the keys given ("data_dir" -> "data-dir"), for resume's check of what was given.
std::vector<std::string> flags_of(const Settings& settings) {
  std::vector<std::string> flags;
  for (const auto& [key, _] : settings) {
    std::string flag = key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    flags.push_back(std::move(flag));
  }
  return flags;
}

bool given(const std::vector<std::string>& flags, std::string_view flag) {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

// resume=DIR: the run's own options from its checkpoint, the given ones checked against them
// (experiment/resume_options.hpp, as `train --resume`); the header, for the arrays' identity.
std::pair<TrainerOptions, CheckpointHeader> resumed(const TrainerOptions& given_options,
                                                    const std::vector<std::string>& flags) {
  const std::filesystem::path dir = given_options.resume_dir;
  if (auto s = check_resume_flags(dir, given_options, flags); !s) {
    throw OptionError(s.error().message);
  }
  auto run = read_resumed_run(dir);
  if (!run) throw OptionError(run.error().message);
  if (auto s = apply_given_options(*run, given_options, flags); !s) {
    throw OptionError(s.error().message);
  }
  return {std::move(run->options), std::move(run->header)};
}

// The run's data: the data set its options name, or the NumPy arrays given (data=), which a
// resumed run must have started on.
Dataset data_of(const ResolvedRun& run, const py::object& arrays,
                const std::optional<CheckpointHeader>& header) {
  const std::string& dataset = run.options().dataset;
  const std::string dir = run.options().resume_dir.string();
  if (arrays.is_none()) {
    if (dataset == kArraysDataset) {
      throw OptionError(
          fmt::format("resume {}: the run trained on NumPy arrays; give them again as data=", dir));
    }
    auto loaded = load_dataset(dataset, run.options().data_dir);
    if (!loaded) throw OptionError(loaded.error().message);
    return std::move(loaded).value();
  }
  if (dataset != kArraysDataset) {
    throw OptionError(fmt::format(
        "data=: the run in {} trained on --dataset {}, not on NumPy arrays; resume it without "
        "data=",
        dir, dataset));
  }
  Dataset data = dataset_from_arrays(arrays, dataset);
  // A run of another version recorded no digest; else the arrays must be the run's.
  if (header && !header->data_digest.empty() && header->data_digest != data.digest) {
    throw OptionError(fmt::format(
        "data=: the arrays are not the ones the run in {} started on (digest {}, recorded {}); "
        "give the arrays it trained on, or start it again with force=True",
        dir, data.digest, header->data_digest));
  }
  return data;
}

// The run's options from stalesgd.train's keywords (its own: data, progress), and for resume=
// the checkpoint's header (the arrays' identity).
std::pair<TrainerOptions, std::optional<CheckpointHeader>> run_options(const Settings& settings) {
  const TrainerOptions given_options =
      options_from_settings(settings, "train", {"data", "progress"});
  const std::vector<std::string> flags = flags_of(settings);
  // As `train --out ''` and `--resume ''` are refused (tools/cli/train_args.cpp); without out=
  // the package gives a temporary folder, except to a resumed run, which has its own.
  for (const char* flag : {"out", "resume"}) {
    const auto& dir =
        std::string_view(flag) == "out" ? given_options.out_dir : given_options.resume_dir;
    if (given(flags, flag) && dir.empty()) {
      throw OptionError(
          fmt::format("--{} '' names no folder; give one, e.g. --{} runs/a", flag, flag));
    }
  }
  if (given_options.resume_dir.empty()) {
    if (given_options.out_dir.empty()) {
      throw OptionError("--out '' names no folder; give one, e.g. --out runs/a");
    }
    return {given_options, std::nullopt};
  }
  auto [options, header] = resumed(given_options, flags);
  return {std::move(options), std::move(header)};
}

// A progress sample as the dict python/stalesgd/_progress.py shows.
py::dict progress_dict(const ProgressSample& s) {
  py::dict p;
  p["t"] = s.t_s;
  p["wall"] = s.wall_s;
  p["iteration"] = s.iteration;
  p["budget"] = s.budget ? py::cast(*s.budget) : py::none();
  p["test_error"] = s.test_error ? py::cast(*s.test_error) : py::none();
  return p;
}

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
        auto [options, header] = run_options(settings);
        const bool resume = header.has_value();
        auto resolved = ResolvedRun::resolve(options);
        if (!resolved) throw OptionError(resolved.error().message);
        // A bad save_model is found before anything is trained, as `train --save-model`'s.
        const auto& save_model = resolved->options().save_model;
        if (!save_model.empty()) {
          if (auto ok = check_model_path(save_model); !ok) throw OptionError(ok.error().message);
        }
        const Dataset data = data_of(*resolved, arrays, header);
        // Set by the interpreter's thread on Ctrl-C, polled by the run; relaxed, as it carries no
        // data (as the CLI's flag, tools/cli/interrupt.cpp).
        std::atomic<bool> interrupt{false};
        LatestProgress progress;
        Result<FolderRun> ran = Error{""};
        const RunFolderOptions folder{.dir = resolved->options().out_dir,
                                      .existing = resume ? ExistingRun::kResume
                                                  : resolved->options().force
                                                      ? ExistingRun::kOverwrite
                                                      : ExistingRun::kRefuse,
                                      .command_line = command_line,
                                      .interrupt = &interrupt,
                                      .progress = on_progress.is_none() ? nullptr : &progress};
        run_interruptible([&] { ran = run_into_folder(*resolved, data, folder); }, interrupt,
                          [&] {
                            if (on_progress.is_none()) return;
                            if (auto sample = progress.take()) on_progress(progress_dict(*sample));
                          });
        if (!ran) throw OptionError(ran.error().message);
        // save_model: the final parameters, the ones the last evaluation scored (as the CLI's).
        if (!save_model.empty() && !ran->record.final_params.empty()) {
          if (auto s = write_model_file(save_model, ran->record.final_params); !s) {
            throw OptionError(fmt::format("--save-model: {}", s.error().message));
          }
        }
        return summary_of(*ran);
      },
      py::arg("settings"), py::arg("command_line"), py::arg("arrays") = py::none(),
      py::arg("on_progress") = py::none());
}

}  // namespace stalesgd::python
