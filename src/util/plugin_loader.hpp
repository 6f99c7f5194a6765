// Loading plug-ins (stalesgd/plugin.hpp): dlopen, the interface version, the registration, each
// failure one line naming the file; and the list of what was loaded, for provenance.
//
// Thread safety: load_plugin from one thread, before runs start (the CLI loads plug-ins first);
// loaded_plugins from any.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "stalesgd/util/result.hpp"

namespace stalesgd {

struct LoadedPlugin {
  std::filesystem::path path;  // absolute
  std::string crc32;           // of the file's bytes, 8 hex digits
};

// Loads the plug-in at `path` (a file loaded before, by the same absolute path, is not loaded
// again): RTLD_NOW, so that a missing symbol is found here; the interface version; the
// registration, whose exception is caught.
Status load_plugin(const std::filesystem::path& path);

// Every plug-in loaded in this process, in load order.
std::vector<LoadedPlugin> loaded_plugins();

// The plug-ins a `--plugin` value names: paths separated by colons, as in PATH.
std::vector<std::filesystem::path> plugin_paths(const std::string& value);

}  // namespace stalesgd
