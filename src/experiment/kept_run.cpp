// race --resume: a kept run's settings against the experiment file's.
#include "experiment/kept_run.hpp"

#include <map>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "config/option_table.hpp"

namespace stalesgd {
namespace {

bool not_compared(const std::string& key) {
  return key == "checkpoint_every" || key == "data_dir" || key == "progress" ||
         key == "progress_every";
}

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

}  // namespace

std::optional<std::string> changed_setting(const nlohmann::json& config,
                                           const TrainerOptions& now) {
  if (!config.is_object()) return std::string("summary.json has no config");
  const nlohmann::json file = options_to_json(now);
  for (const auto& [key, value] : file.items()) {
    if (not_compared(key)) continue;
    // summary.json says null where 0 means none, and the samples each evaluation used where
    // 0 means all of them.
    const bool zero = value.is_number() && value.get<double>() == 0.0;
    if ((key == "eval_samples" || key == "eval_train_samples") && zero) continue;
    const auto it = config.find(key);
    const nlohmann::json used = it == config.end() ? nlohmann::json() : *it;
    if (used == value || (used.is_null() && zero)) continue;
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
  for (std::size_t i = 0; i + 1 < recorded.size(); ++i) {
    if (recorded[i] != "--checkpoint-every") continue;
    TrainerOptions o;
    if (const OptionDecl* d = find_option("checkpoint-every");
        d != nullptr && set_from_text(*d, recorded[i + 1], o)) {
      return o.checkpoint_every_s;
    }
  }
  return 0.0;
}

}  // namespace stalesgd
