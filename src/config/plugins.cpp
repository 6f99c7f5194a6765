// Loading the plug-ins that options name, before the options are read (config/plugins.hpp).
#include "config/plugins.hpp"

#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "config/option_table.hpp"
#include "util/plugin_loader.hpp"

namespace stalesgd {

std::string absolute_plugin_paths(const std::string& value) {
  std::string out;
  for (const auto& p : plugin_paths(value)) {
    std::error_code ec;
    const auto abs = std::filesystem::absolute(p, ec).lexically_normal();
    if (!out.empty()) out += ':';
    out += (ec ? p : abs).string();
  }
  return out;
}

Status load_plugins(const std::string& value) {
  for (const auto& path : plugin_paths(value)) {
    if (auto s = load_plugin(path); !s) return s;
    if (auto s = check_rule_options(); !s) {
      return Error{fmt::format("--plugin {}: {}", path.string(), s.error().message)};
    }
  }
  return check_rule_options();
}

Status load_plugins_in_args(const std::vector<std::string>& args) {
  // The value of a `plugin=X` setting: --set plugin=X, --set=plugin=X or the bare plugin=X.
  const auto setting = [](std::string_view a) -> std::optional<std::string> {
    if (a.rfind("--set=", 0) == 0) a.remove_prefix(6);
    if (a.rfind("plugin=", 0) != 0) return std::nullopt;
    return std::string(a.substr(7));
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::optional<std::string> value;
    if ((a == "--plugin" || a == "--set") && i + 1 < args.size()) {
      value = a == "--plugin" ? std::optional(args[i + 1]) : setting(args[i + 1]);
      ++i;
    } else if (a.rfind("--plugin=", 0) == 0) {
      value = a.substr(9);
    } else {
      value = setting(a);
    }
    if (value) {
      if (auto s = load_plugins(*value); !s) return s;
    }
  }
  return {};
}

Status load_plugins_in_toml(const toml::table& root) {
  const auto load = [](const toml::table& t) -> Status {
    if (const auto* v = t.get("plugin"); v != nullptr) {
      if (const auto text = v->value_exact<std::string>()) return load_plugins(*text);
    }
    return {};
  };
  if (auto s = load(root); !s) return s;
  if (const auto* runs = root.get_as<toml::array>("run")) {
    for (const auto& run : *runs) {
      if (const auto* t = run.as_table()) {
        if (auto s = load(*t); !s) return s;
      }
    }
  }
  return {};
}

}  // namespace stalesgd
