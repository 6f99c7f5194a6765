// `stalesgd train`'s flags: the option table's, --config (a run.toml), --set KEY=VALUE and the
// bare KEY=VALUE form, logging and --help; fills TrainerOptions for run_train or run_resume
// (train_command.cpp, resume_command.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/flag_parsing.hpp"
// The option table is internal to the library (src/); the CLI target sees include/ only.
#include "config/option_table.hpp"
#include "experiment/setting.hpp"

namespace stalesgd::cli {
namespace {

// The train flags, from the option table: every value is a cxxopts string that the table parses
// (set_from_text), so values, defaults and messages are those of experiment files too.
std::vector<std::string> add_train_options(cxxopts::Options& options) {
  std::vector<std::string> groups;
  for (const auto& d : train_options()) {
    const std::string group(d.group);
    if (std::find(groups.begin(), groups.end(), group) == groups.end()) groups.push_back(group);
    const std::string name(d.name);
    // cxxopts takes a one-letter name for a short flag; parse() turns the documented --k into -k.
    const std::string help =
        name.size() == 1 ? fmt::format("(--{}) {}", name, d.help) : std::string(d.help);
    if (d.type == OptionType::kSwitch) {
      options.add_options(group)(name, help);
      continue;
    }
    auto value = cxxopts::value<std::string>();
    if (!d.default_text.empty()) value->default_value(std::string(d.default_text));
    options.add_options(group)(name, help, value);
  }
  // Not an option of the run: where more of its options come from (run.toml, config/run_toml.cpp).
  options.add_options(groups.front())("config",
                                      "A run.toml (every run folder holds one) whose options this "
                                      "run takes; flags given beside it override them",
                                      cxxopts::value<std::string>());
  add_logging_options(options);
  groups.push_back(kLogGroup);
  options.add_options(groups.back())("h,help", "Show this help");
  return groups;
}

// Sets the flags given; the others keep TrainerOptions' defaults, which the table's default
// texts shown by --help equal (tests/config/option_table_test.cpp).
Status train_options_from(const cxxopts::ParseResult& r, TrainerOptions& o) {
  for (const auto& d : train_options()) {
    const std::string name(d.name);
    if (r.count(name) == 0) continue;
    if (d.type == OptionType::kSwitch) {
      set_switch(d, r[name].as<bool>(), o);
    } else if (auto s = set_from_text(d, r[name].as<std::string>(), o); !s) {
      return s;
    }
  }
  return {};
}

// train's --set KEY=VALUE (and bare KEY=VALUE): the experiment file's keys, read as race reads
// them, after the flags; a key that a flag sets too, or a sweep, is refused (one run, one
// value). The flags' names that were set, for a resume's check of what was given.
Result<std::vector<std::string>> apply_train_sets(const std::vector<std::string>& sets,
                                                  const cxxopts::ParseResult& r,
                                                  TrainerOptions& o) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < sets.size(); ++i) {
    if (sets[i].rfind("seeds=", 0) == 0) {
      return Error{
          fmt::format("--set {}: train runs one seed; give --set seed=N, or race for "
                      "several",
                      sets[i])};
    }
    auto setting = setting_from_arg(sets[i], i);
    if (!setting) return setting.error();
    if (setting->values.size() != 1 || setting->list) {
      return Error{
          fmt::format("--set {}: a list sweeps, and train runs one run; give one value, "
                      "or sweep it with `stalesgd race --set`",
                      sets[i])};
    }
    const std::string name(setting->option->name);
    if (r.count(name) > 0 || std::find(names.begin(), names.end(), name) != names.end()) {
      return Error{fmt::format("--set {}: {} is given twice; give it once", sets[i],
                               option_key(*setting->option))};
    }
    if (auto s = apply_setting(*setting, 0, o); !s) return s.error();
    names.push_back(name);
  }
  return names;
}

}  // namespace

int train_command(int argc, char** argv, const std::vector<std::string>& command_line) {
  cxxopts::Options options("stalesgd train",
                           "Train a model with a K-of-P parameter-server rule, straggler delays "
                           "and staleness tracking.\nDocs: docs/rules.md, docs/stragglers.md, "
                           "docs/models.md.");
  const std::vector<std::string> groups = add_train_options(options);
  options.add_options(groups.front())(
      "set",
      "KEY=VALUE: set an option by its experiment-file key, VALUE as its flag takes it "
      "(--set lr=0.1; repeatable; a bare KEY=VALUE is a --set too)",
      cxxopts::value<std::string>());
  try {
    std::vector<std::string> args(argv, argv + argc);
    auto sets = take_repeated(args, "set");
    if (!sets) return usage_error("train", sets.error().message);
    std::vector<std::string> switches{"--help", "-h", "-q", "--quiet", "-v", "--verbose"};
    for (const auto& d : train_options()) {
      if (d.type == OptionType::kSwitch) switches.push_back("--" + std::string(d.name));
    }
    for (auto& bare : take_bare_settings(args, switches)) sets->push_back(std::move(bare));
    std::vector<char*> ptrs;
    for (auto& arg : args) ptrs.push_back(arg.data());
    auto r = parse(options, static_cast<int>(ptrs.size()), ptrs.data());
    if (auto done = help_or_logging(options, r, groups)) return *done;
    TrainerOptions o;
    if (r.count("config") > 0 && r.count("resume") > 0) {
      return fail(
          "--config and --resume exclude each other: a resumed run takes its options "
          "from its checkpoint",
          2);
    }
    if (r.count("config") > 0) {
      auto from_file = options_from_toml(r["config"].as<std::string>());
      if (!from_file) return fail(fmt::format("--config {}", from_file.error().message), 2);
      o = std::move(from_file).value();
    }
    if (auto s = train_options_from(r, o); !s) return fail(s.error().message, 2);
    auto set_keys = apply_train_sets(*sets, r, o);
    if (!set_keys) return fail(set_keys.error().message, 2);
    // An empty --out would write nothing while looking like it writes: refused.
    for (const char* flag : {"out", "resume"}) {
      if (r.count(flag) > 0 && r[flag].as<std::string>().empty()) {
        return fail(fmt::format("--{} '' names no folder; give one, e.g. --{} runs/a", flag, flag),
                    2);
      }
    }
    if (!o.resume_dir.empty()) {
      std::vector<std::string> given;
      for (const auto& d : train_options()) {
        if (r.count(std::string(d.name)) > 0) given.emplace_back(d.name);
      }
      given.insert(given.end(), set_keys->begin(), set_keys->end());
      return run_resume(o, given, command_line);
    }
    return run_train(o, {}, command_line);
  } catch (const cxxopts::exceptions::exception& e) {
    return usage_error("train", e);
  }
}

}  // namespace stalesgd::cli
