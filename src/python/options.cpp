// TrainerOptions from Python's keyword arguments, read by the option table exactly as
// `stalesgd train --set key=value` reads them, so that values and messages are the CLI's
// (docs/python.md, "Options").
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "config/option_table.hpp"
#include "experiment/setting.hpp"
#include "python/bindings.hpp"

namespace stalesgd::python {

TrainerOptions options_from_settings(const Settings& settings) {
  TrainerOptions o;
  std::vector<std::string> given;
  for (std::size_t i = 0; i < settings.size(); ++i) {
    const auto& [key, text] = settings[i];
    const std::string arg = fmt::format("{}={}", key, text);
    if (key == "seeds") {
      throw OptionError(fmt::format(
          "--set {}: train runs one seed; give --set seed=N, or race for several", arg));
    }
    // A key that is no experiment-file key may still be a flag of train's own (out, force,
    // sequential, no_progress), spelt with '_' as keys are.
    std::string flag = key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    const OptionDecl* own = experiment_option(key) == nullptr ? find_option(flag) : nullptr;
    if (std::find(given.begin(), given.end(), key) != given.end()) {
      throw OptionError(fmt::format("--set {}: {} is given twice; give it once", arg, key));
    }
    given.push_back(key);
    if (own != nullptr) {
      // The flag's own reading: a switch takes "true" or "false".
      if (auto s = set_from_text(*own, text, o); !s) throw OptionError(s.error().message);
      continue;
    }
    auto setting = setting_from_arg(arg, i);
    if (!setting) throw OptionError(setting.error().message);
    if (setting->values.size() != 1 || setting->list) {
      throw OptionError(fmt::format(
          "--set {}: a list sweeps, and train runs one run; give one value, or sweep it with "
          "`stalesgd race --set`",
          arg));
    }
    if (auto s = apply_setting(*setting, 0, o); !s) throw OptionError(s.error().message);
  }
  return o;
}

}  // namespace stalesgd::python
