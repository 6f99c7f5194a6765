// The plug-ins a run's options name (--plugin, TrainerOptions::plugin; stalesgd/plugin.hpp):
// loaded before the options that hold their rules' flags are read, wherever options are read
// -- the command line, a checkpoint's recorded flags, run.toml, an experiment file -- and
// checked against train's own options. Private to src/config and the CLI.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "stalesgd/util/result.hpp"

namespace stalesgd {

// `value` ("a.so:lib/b.so") with each path made absolute against the current folder.
std::string absolute_plugin_paths(const std::string& value);

// Loads the plug-ins of a --plugin value (util/plugin_loader.hpp), then checks the rules they
// registered against train's own options (check_rule_options). One line on failure.
Status load_plugins(const std::string& value);

// The same for the --plugin values among command-line words ("--plugin X", "--plugin=X", and
// the settings "--set plugin=X", "--set=plugin=X" and the bare "plugin=X").
Status load_plugins_in_args(const std::vector<std::string>& args);

// The same for an experiment file's or run.toml's `plugin` keys: at the top and in each
// [[run]] table.
Status load_plugins_in_toml(const toml::table& root);

}  // namespace stalesgd
