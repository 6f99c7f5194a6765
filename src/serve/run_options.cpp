// The theory's prediction for a run before its final summary.json: from runs.csv's row, or from
// the options the summary.json written at the start records.
#include "serve/run_options.hpp"

#include <algorithm>

#include "config/option_table.hpp"
#include "stalesgd/config/resolved_run.hpp"
#include "stalesgd/theory/runtime.hpp"

namespace stalesgd::serve {

std::optional<nlohmann::json> predict_from_settings(
    const std::map<std::string, std::string>& settings) {
  TrainerOptions options;
  for (const auto& [key, value] : settings) {
    std::string flag = key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    const OptionDecl* d = find_option(flag);
    // runs.csv leaves an option a run does not have empty (an mlp's hidden of a softmax).
    if (d == nullptr || value.empty()) continue;
    if (!set_from_text(*d, value, options)) return std::nullopt;
  }
  return predict_from_options(std::move(options));
}

std::optional<nlohmann::json> predict_from_config(const nlohmann::json& config) {
  auto options = options_from_json(config);
  if (!options) return std::nullopt;
  return predict_from_options(std::move(options).value());
}

std::optional<nlohmann::json> predict_from_options(TrainerOptions options) {
  // A plug-in a run names is never loaded here, which would run code the served folder
  // names: its rules are known when serve's own --plugin loaded it.
  options.plugin.clear();
  auto run = ResolvedRun::resolve(std::move(options));
  if (!run) return std::nullopt;
  const auto p = predict_runtime(*run);
  if (!p) return std::nullopt;
  return nlohmann::json{{"seconds_per_iteration", p->seconds_per_iteration},
                        {"method", to_string(p->method)},
                        {"formula", p->formula}};
}

}  // namespace stalesgd::serve
