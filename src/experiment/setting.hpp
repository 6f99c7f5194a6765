// One option key's value or list of values in an experiment: from the file (a TOML node) or
// from `race --set key=value`. A list is a sweep (docs/experiments.md, "Sweeps").
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "config/option_table.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

// One value of a key, as the file or the command line wrote it.
struct SettingValue {
  const toml::node* node = nullptr;  // the file's value (lives as long as the parsed document);
                                     // null for a --set text
  std::string text;                  // the value in labels: "4", "exp:mean=5ms", "256,128"
  std::string where;                 // for messages: "exp.toml:12" or "--set k=[1,2]"
};

// A key's value(s) in one run.
struct Setting {
  const OptionDecl* option = nullptr;
  std::vector<SettingValue> values;  // one, or a sweep's values in the order written
  bool list = false;                 // written as a list: a sweep, even of one value
  // Where the key was written, which orders the sweep: (line, column) in the file; a --set
  // after every line of the file; `seed` after everything (seeds vary fastest).
  std::pair<long, long> order{0, 0};
};

// The setting of `key = node` in `file` (`seeds` gives the setting of `seed`). Every value is
// checked here, once, so that a bad value is reported even when a run overrides the key. The
// error is one line naming the file, line and key.
Result<Setting> setting_from_toml(const std::filesystem::path& file, std::string_view key,
                                  const toml::node& node);

// The setting of one `race --set` argument, "key=value" or "key=[v1,v2,...]" (a sweep;
// elements holding commas in double quotes; a list key such as hidden sweeps only a list of
// bracketed lists, hidden=[[128],[256,128]]). `index` is its position among the --set flags.
Result<Setting> setting_from_arg(std::string_view arg, std::size_t index);

// Sets value `i` of `setting` in `options`; the error names where the value was written.
Status apply_setting(const Setting& setting, std::size_t i, TrainerOptions& options);

// What a value is, for "must be ..., not <it>": `the integer 5`, `the string '4'`, `an array`.
std::string shown_value(const toml::node& node);

// The option that experiment key `key` sets (a TOML key of the option table), or null.
const OptionDecl* experiment_option(std::string_view key);

// " (did you mean 'lr_rule'?)" when a key is a typo of one (a few letters off), else "".
std::string did_you_mean(std::string_view key);

// "dataset, data_dir, model, ...": every key a file, a --set or a placeholder may name.
std::string known_experiment_keys();

// How a label shows the value `option` has in `options` (the resolved value of a key the run
// does not set, e.g. the effective K): durations as "500ms", lists as "256,128".
std::string option_text(const OptionDecl& option, const TrainerOptions& options);

}  // namespace stalesgd
