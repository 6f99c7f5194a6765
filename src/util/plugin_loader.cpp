// load_plugin: dlopen and the entry points of stalesgd/plugin.hpp.
#include "util/plugin_loader.hpp"

#include <dlfcn.h>

#include <exception>
#include <mutex>

#include <fmt/format.h>

#include "stalesgd/plugin.hpp"
#include "util/crc32.hpp"
#include "util/regular_file.hpp"

namespace stalesgd {
namespace {

struct Loaded {
  std::mutex mutex;
  std::vector<LoadedPlugin> plugins;  // GUARDED_BY(mutex)
};

Loaded& loaded() {
  static Loaded* l = new Loaded;  // never destroyed: a plug-in's code stays loaded for good
  return *l;
}

constexpr const char* kBuildFix =
    "build it against this stalesgd with STALESGD_PLUGIN(...) (docs/architecture.md, \"A rule "
    "as a plug-in\")";

}  // namespace

Status load_plugin(const std::filesystem::path& given) {
  std::error_code ec;
  const std::filesystem::path path = std::filesystem::absolute(given, ec).lexically_normal();
  {
    std::lock_guard lock(loaded().mutex);
    for (const auto& p : loaded().plugins) {
      if (p.path == path) return {};
    }
  }
  const std::string name = fmt::format("--plugin {}", given.string());
  // A regular file, read whole for its digest (and so that a FIFO cannot hang dlopen).
  auto bytes = read_user_file(path, name, "give the .so file the plug-in's build wrote",
                              std::uint64_t{1} << 32);
  if (!bytes) return bytes.error();
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return Error{fmt::format("{}: cannot be loaded as a shared library ({}); {}", name,
                             why != nullptr ? why : "dlopen failed", kBuildFix)};
  }
  using Abi = int (*)();
  using Register = void (*)(Status*);
  const auto abi = reinterpret_cast<Abi>(::dlsym(handle, "stalesgd_plugin_abi"));
  const auto reg = reinterpret_cast<Register>(::dlsym(handle, "stalesgd_plugin_register"));
  if (abi == nullptr || reg == nullptr) {
    return Error{
        fmt::format("{}: a shared library without stalesgd's entry points "
                    "(stalesgd_plugin_abi, stalesgd_plugin_register); {}",
                    name, kBuildFix)};
  }
  if (const int built = abi(); built != STALESGD_PLUGIN_ABI) {
    return Error{
        fmt::format("{}: built against plug-in interface {}, and this stalesgd has {}; "
                    "rebuild it against this stalesgd",
                    name, built, STALESGD_PLUGIN_ABI)};
  }
  Status registered;
  try {
    reg(&registered);
  } catch (const std::exception& e) {
    return Error{fmt::format("{}: its registration threw: {}", name, e.what())};
  } catch (...) {
    return Error{
        fmt::format("{}: its registration threw an exception that is not a "
                    "std::exception",
                    name)};
  }
  if (!registered) return Error{fmt::format("{}: {}", name, registered.error().message)};
  std::lock_guard lock(loaded().mutex);
  loaded().plugins.push_back({path, fmt::format("{:08x}", crc32_of(std::string_view(*bytes)))});
  return {};
}

std::vector<LoadedPlugin> loaded_plugins() {
  std::lock_guard lock(loaded().mutex);
  return loaded().plugins;
}

std::vector<std::filesystem::path> plugin_paths(const std::string& value) {
  std::vector<std::filesystem::path> out;
  for (std::size_t start = 0; start <= value.size();) {
    const std::size_t comma = value.find(':', start);
    const std::string part = value.substr(start, comma - start);
    if (!part.empty()) out.emplace_back(part);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace stalesgd
