// race --resume: a kept run's settings against the experiment file's.
#include "experiment/kept_run.hpp"

#include <fstream>
#include <map>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "config/option_table.hpp"
#include "output/checkpoint.hpp"
#include "output/recorded_options.hpp"
#include "stalesgd/data/catalog.hpp"
#include "util/regular_file.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {
namespace fs = std::filesystem;

namespace {

// Flag -> value ("" for a switch) of an argument list, without --checkpoint-every and
// --data-dir.
std::map<std::string, std::string> flag_values(const std::vector<std::string>& args) {
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].rfind("--", 0) != 0) continue;
    const bool has_value = i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0;
    const std::string value = has_value ? args[i + 1] : std::string();
    if (args[i] != "--checkpoint-every" && args[i] != "--data-dir") out[args[i]] = value;
    if (has_value) ++i;
  }
  return out;
}

// --resume: the summary of a run that finished (complete, and not stopped by Ctrl-C).
std::optional<nlohmann::json> finished_summary(const fs::path& dir) {
  const auto text = read_user_file(dir / "summary.json", "", "", kTextFileMost);
  if (!text) return std::nullopt;
  auto s = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!s.is_object() || s.value("status", "") != std::string("complete") ||
      s.value("stop_reason", "") == std::string("interrupted")) {
    return std::nullopt;
  }
  return s;
}

}  // namespace

std::optional<std::string> changed_setting(const nlohmann::json& config,
                                           const TrainerOptions& now) {
  if (!config.is_object()) return std::string("summary.json has no config");
  const nlohmann::json file = options_to_json(now);
  for (const auto& [key, value] : file.items()) {
    if (outside_the_run(key)) continue;
    // summary.json says null where 0 means none, and the samples each evaluation used where
    // 0 means all of them.
    const bool zero = value.is_number() && value.get<double>() == 0.0;
    if ((key == "eval_samples" || key == "eval_train_samples") && zero) continue;
    const auto it = config.find(key);
    const nlohmann::json used = it == config.end() ? nlohmann::json() : *it;
    // A switch a run from before it was recorded without is off.
    const bool off = value.is_boolean() && !value.get<bool>();
    if (used == value || (used.is_null() && (zero || off))) continue;
    // An mpi run's job was given its npz:PATH absolute (mpi_launch.cpp): the same file.
    if (key == "dataset" && used.is_string() && value.is_string() &&
        absolute_dataset_name(used.get<std::string>()) ==
            absolute_dataset_name(value.get<std::string>())) {
      continue;
    }
    return fmt::format("{} = {} (the run used {})", key, value.dump(),
                       used.is_null() ? std::string("none") : used.dump());
  }
  return std::nullopt;
}

std::optional<std::string> changed_flag(const std::vector<std::string>& recorded,
                                        const TrainerOptions& now) {
  const auto was = flag_values(recorded);
  const auto is = flag_values(options_to_args(now));
  for (const auto* side : {&is, &was}) {
    for (const auto& [flag, _] : *side) {
      const auto a = is.find(flag);
      const auto b = was.find(flag);
      if (a != is.end() && b != was.end() && a->second == b->second) continue;
      return fmt::format("{} {} (the run's checkpoint: {})", flag,
                         a == is.end() ? "not given" : a->second,
                         b == was.end() ? "not given" : b->second);
    }
  }
  return std::nullopt;
}

double recorded_checkpoint_every(const std::vector<std::string>& recorded) {
  const auto o = options_from_args(recorded);
  return o ? o->checkpoint_every_s : 0.0;
}

Result<KeptRun> keep(const ExperimentRun& r, const fs::path& dir, const RaceSettings& settings,
                     const RaceData& data) {
  KeptRun k;
  const auto changed_error = [&](const fs::path& file, const std::string& changed) {
    return Error{fmt::format(
        "run '{}': {} was written for other settings than the experiment file's now: {}; "
        "restore the file, add --force to run the changed runs again, or race into a new --out",
        r.label, file.string(), changed)};
  };
  if (auto done = finished_summary(dir)) {
    if (auto changed = changed_setting((*done)["config"], r.options())) {
      if (!settings.rerun_changed) return changed_error(dir / "summary.json", *changed);
      return k;
    }
    k.summary = std::move(done);
    return k;
  }
  // An mpi run is run again from its start; a run without a checkpoint afresh.
  if (r.options().engine == EngineKind::kMpi || !fs::exists(dir / kCheckpointFile)) return k;
  auto read = read_checkpoint(dir);
  if (!read) return read.error();
  StateReader in(*read);
  const CheckpointHeader header = load_header(in);
  if (!in.ok()) return Error{fmt::format("{}: {}", (dir / kCheckpointFile).string(), in.error())};
  if (auto changed = changed_flag(header.args, r.options())) {
    if (!settings.rerun_changed) return changed_error(dir / kCheckpointFile, *changed);
    return k;
  }
  const auto& ds = data.at({r.options().dataset, r.options().data_dir.string()});
  if (auto same = check_identity(header, r.options(), ds); !same) {
    if (!settings.rerun_changed) {
      return Error{fmt::format("run '{}': {}: {}", r.label, (dir / kCheckpointFile).string(),
                               same.error().message)};
    }
    return k;
  }
  if (auto kept = check_recorded_options(dir, r.options()); !kept) {
    if (!settings.rerun_changed)
      return Error{fmt::format("run '{}': {}", r.label, kept.error().message)};
    return k;
  }
  k.payload = std::move(read).value();
  k.offsets = header.offsets;
  k.checkpoint_every_s = recorded_checkpoint_every(header.args);
  return k;
}

}  // namespace stalesgd
