// The options of `stalesgd train`, each declared once: its flag, type, default, help text and
// how it reads and writes TrainerOptions. The CLI (tools/cli/args.cpp), the TOML experiment
// loader and summary.json's "config" object are all driven by this one table.
#pragma once

#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <toml++/toml.h>
#include <nlohmann/json_fwd.hpp>

#include "stalesgd/config/trainer_options.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

enum class OptionType {
  kString,
  kInteger,   // signed, within [min, max]
  kUnsigned,  // >= 0
  kNumber,    // a finite floating-point number (TOML integers widen)
  kDuration,  // "20s", "500ms" (parse_duration); seconds in TrainerOptions and JSON
  kChoice,    // one of `choices`
  kIntList,   // integers in [min, max]: "256,128" on the CLI, [256, 128] in TOML and JSON
  kSwitch,    // a flag without a value on the CLI, a boolean in TOML and JSON
};

// A parsed value, in the representation of its type: kInteger int64, kUnsigned uint64,
// kNumber and kDuration double (seconds), kString and kChoice string, kIntList vector, kSwitch
// bool.
using OptionValue =
    std::variant<bool, std::int64_t, std::uint64_t, double, std::string, std::vector<int>>;

struct OptionDecl {
  std::string_view name;  // the CLI flag without "--"; the TOML and JSON key is option_key()
  OptionType type = OptionType::kString;
  std::string_view default_text;  // what --help shows; parses to TrainerOptions{}'s value.
                                  // Empty: no default worth writing (--k, --hidden, --out)
  std::string_view help;
  std::string_view group;  // the --help section
  bool toml = true;        // also an experiment-file key
  bool json = true;        // recorded in summary.json's "config"
  std::int64_t min = 0;    // kInteger, kIntList (each element): the bounds
  std::int64_t max = 0;
  std::vector<std::string_view> choices;  // kChoice words
  std::string_view expects;  // what a valid value is, for errors; empty: derived from the type
  std::function<void(TrainerOptions&, const OptionValue&)> set;
  // The value in `options`; nullopt leaves it out of the JSON (hidden for a model without any).
  std::function<std::optional<OptionValue>(const TrainerOptions&)> get;
  // Declared by a rule (rule_option.hpp): its value lives in TrainerOptions::rule.params.
  bool rule_option = false;
};

// Every option of `stalesgd train`, in --help order: train's own, then the options the
// registered rules declare (rule_registry.hpp), each once, in the order the rules registered;
// a rule registered since the last call has its options appended. The entries stay where they
// are as the table grows.
const std::deque<OptionDecl>& train_options();

// A registered rule's option that takes a name of train's own (--batch), or that no table entry
// can hold: one line naming the rule and the option, for a plug-in's or a program's
// registration (its options are left out of the table until it is gone).
Status check_rule_options();

// The declaration whose flag is `name` ("eval-every"), or null.
const OptionDecl* find_option(std::string_view name);

// The TOML and JSON key: the flag with '-' replaced by '_' ("eval_every").
std::string option_key(const OptionDecl& option);

// Parses `text` as the CLI gives it and sets the option; a switch takes "true" or "false". The
// error names the flag and the value: "--time '5': time '5' has no unit; ...".
Status set_from_text(const OptionDecl& option, std::string_view text, TrainerOptions& options);

// A switch given (on) or not (off) on the command line.
void set_switch(const OptionDecl& option, bool on, TrainerOptions& options);

// Sets the option from a TOML value of the matching type (no conversion from strings). The
// error is "must be ..." for the caller to prefix with the file, line and key.
Status set_from_toml(const OptionDecl& option, const toml::node& node, TrainerOptions& options);

// summary.json's "config": every recorded option under its key. Durations are seconds, choices
// their words; `clock` reads "sequential" for --sequential runs.
nlohmann::json options_to_json(const TrainerOptions& options);

// The command line that gives `options` back: "--flag value" for every option summary.json
// records (a switch only when on), in table order. Durations in their exact unit, numbers to
// 17 digits. For running a run in another process (a race's --engine mpi run).
std::vector<std::string> options_to_args(const TrainerOptions& options);

// The inverses (config/options_read_back.cpp), on top of TrainerOptions{}: a recorded command
// line ("--flag value" and switches, as options_to_args writes it and a checkpoint records it)
// and summary.json's "config". An Error names the flag or key that is unknown, lacks its
// value, or holds a value of the wrong type or out of range.
Result<TrainerOptions> options_from_args(const std::vector<std::string>& args);
Result<TrainerOptions> options_from_json(const nlohmann::json& config);

// run.toml (config/run_toml.cpp): every option summary.json records, under its key, in TOML as
// experiment files write values (durations as "5s"); and the options such a file gives, on top of
// TrainerOptions{}. An Error names the file, the line and the key that is unknown or wrong.
std::string options_to_toml(const TrainerOptions& options);
Result<TrainerOptions> options_from_toml(const std::filesystem::path& file);

}  // namespace stalesgd
