// TrainerOptions from Python's keyword arguments, read by the option table exactly as
// `stalesgd train --set key=value` reads them, so that values and their messages are the CLI's;
// a key that is no option is named as the keyword argument it is (docs/python.md, "Options").
#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "config/option_table.hpp"
#include "config/plugins.hpp"
#include "experiment/setting.hpp"
#include "python/bindings.hpp"
#include "util/did_you_mean.hpp"

namespace stalesgd::python {
namespace {

// A --set text as Python shows the value it came from (python/stalesgd/_options.py wrote it):
// 3, 0.1, True, [256,128], 'fixed'.
std::string python_value(const std::string& text) {
  if (text == "true" || text == "false") return text == "true" ? "True" : "False";
  char* end = nullptr;
  (void)std::strtod(text.c_str(), &end);
  const bool number = !text.empty() && end == text.c_str() + text.size();
  if (number || (text.size() >= 2 && text.front() == '[' && text.back() == ']')) return text;
  std::string quoted = "'";
  for (const char c : text) {
    if (c == '\\' || c == '\'') quoted += '\\';
    quoted += c;
  }
  return quoted + "'";
}

// A key that is no option, as `call`'s keyword argument: the closest of the option table's keys
// (every one, train's own flags too) and the call's own keywords.
[[noreturn]] void unknown_keyword(std::string_view call, const std::string& key,
                                  const std::string& text,
                                  const std::vector<std::string>& call_keys) {
  std::vector<std::string> keys = call_keys;
  for (const auto& d : train_options()) keys.push_back(option_key(d));
  throw OptionError(fmt::format(
      "{}({}={}): unknown option '{}'{}; the options are the option table's keys, as `stalesgd "
      "train --help` lists them (docs/cli.md)",
      call, key, python_value(text), key, did_you_mean(key, keys)));
}

}  // namespace

TrainerOptions options_from_settings(const Settings& settings, const std::string& call,
                                     const std::vector<std::string>& call_keys) {
  TrainerOptions o;
  // plugin= first, as the CLI loads --plugin first: its rules, their options (keys), models and
  // delay families are then known to the keys that name them.
  for (const auto& [key, text] : settings) {
    if (key != "plugin") continue;
    if (auto s = load_plugins(text); !s) throw OptionError(s.error().message);
  }
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
    const OptionDecl* entry = experiment_option(key);
    const OptionDecl* own = entry == nullptr ? find_option(flag) : nullptr;
    if (own == nullptr && entry == nullptr) {
      unknown_keyword(call, key, text, call_keys);
    }
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
