// `--model torchscript:PATH`: finds and loads the TorchScript plugin (torchscript_plugin.hpp)
// and asks it for the model. The plugin is looked for, in order, where
// STALESGD_TORCHSCRIPT_PLUGIN points, next to the running program, one folder up (the build
// tree's tests/ and benchmarks/), in lib/stalesgd/ beside an installed bin/, and in the library
// folder of the configured install prefix (docs/models.md).
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <system_error>

#include <fmt/format.h>

#include "model/architectures.hpp"
#include "model/torchscript_plugin.hpp"
#include "util/build_info.hpp"
#include "util/regular_file.hpp"

namespace stalesgd::model {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kPrefix = "torchscript:";

std::vector<fs::path> plugin_candidates() {
  std::vector<fs::path> paths;
  if (const char* env = std::getenv("STALESGD_TORCHSCRIPT_PLUGIN"); env && *env) {
    return {fs::path(env)};
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    paths.push_back(exe.parent_path() / kTorchScriptPluginFile);
    paths.push_back(exe.parent_path().parent_path() / kTorchScriptPluginFile);
    // An installed bin/stalesgd, wherever the prefix was moved.
    paths.push_back(exe.parent_path().parent_path() / STALESGD_PLUGIN_DIR / kTorchScriptPluginFile);
  }
  paths.push_back(fs::path(STALESGD_PLUGIN_INSTALL_DIR) / kTorchScriptPluginFile);
  return paths;
}

struct Plugin {
  MakeTorchScriptModel make = nullptr;
  ExportTorchScript export_to = nullptr;
  std::string error;
};

// dlopen once per process; the handle stays open (models made by it live until exit).
const Plugin& plugin() {
  static Plugin loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    const auto candidates = plugin_candidates();
    for (const auto& path : candidates) {
      std::error_code ec;
      if (!fs::exists(path, ec)) continue;
      // One thread for LibTorch's OpenMP and for OpenBLAS, read when they load: the engine's
      // workers are the parallelism (torchscript_layout.hpp, use_one_thread), and OpenBLAS's
      // pthread build starts its pool in its constructor, before any setter can run. Set before
      // the first worker starts (the model is made on the main thread), so no getenv races.
      ::setenv("OMP_NUM_THREADS", "1", 1);
      ::setenv("OPENBLAS_NUM_THREADS", "1", 1);
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!handle) {
        loaded.error = fmt::format(
            "the TorchScript plugin {} does not load ({}); reinstall "
            "libtorch-dev (tools/setup.sh torch) and rebuild",
            path.string(), dlerror());
        return;
      }
      loaded.make = reinterpret_cast<MakeTorchScriptModel>(dlsym(handle, kTorchScriptSymbol));
      loaded.export_to =
          reinterpret_cast<ExportTorchScript>(dlsym(handle, kTorchScriptExportSymbol));
      using Version = const char* (*)();
      if (const auto version =
              reinterpret_cast<Version>(dlsym(handle, kTorchScriptVersionSymbol))) {
        note_library("LibTorch", version());  // summary.json's provenance
      }
      if (!loaded.make || !loaded.export_to) {
        loaded.error =
            fmt::format("{} is not a stalesgd TorchScript plugin; rebuild", path.string());
      }
      return;
    }
    loaded.error = fmt::format(
        "--model torchscript: needs LibTorch, and this build has no TorchScript plugin ({} not "
        "found beside the program or in the library folder); install libtorch-dev "
        "(tools/setup.sh torch) and rebuild, or set STALESGD_TORCHSCRIPT_PLUGIN to the plugin",
        kTorchScriptPluginFile);
  });
  return loaded;
}

}  // namespace

bool is_torchscript_name(std::string_view name) {
  return name.size() > kPrefix.size() && name.substr(0, kPrefix.size()) == kPrefix;
}

void load_torchscript_plugin(std::string_view name) {
  std::error_code ec;
  if (fs::is_regular_file(name.substr(kPrefix.size()), ec)) plugin();
}

namespace {

// A module file that exists and is a regular file: LibTorch would block on a FIFO and read a
// device until the memory ran out.
Status check_module_file(std::string_view flag, std::string_view shown, const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return Error{
        fmt::format("{} {}: no such file '{}'; write one with tools/export_model.py "
                    "(docs/models.md)",
                    flag, shown, path)};
  }
  auto file = open_user_file(path, fmt::format("{} {}", flag, shown),
                             "give a file torch.jit.save wrote (docs/models.md)");
  if (!file) return file.error();
  return {};
}

}  // namespace

Result<std::unique_ptr<Model>> make_torchscript(std::string_view name, const ImageShape& input,
                                                int classes, float l2) {
  TorchScriptRequest request;
  request.path = std::string(name.substr(kPrefix.size()));
  request.input = input;
  request.classes = classes;
  request.l2 = l2;
  if (auto s = check_module_file("--model", name, request.path); !s) return s.error();
  const Plugin& p = plugin();
  if (!p.make) return Error{p.error};
  std::string error;
  Model* made = p.make(request, error);
  if (!made) return Error{fmt::format("--model {}: {}", name, error)};
  return std::unique_ptr<Model>(made);
}

Result<TorchScriptFiles> export_torchscript(std::string_view name, const std::string& into,
                                            std::span<const float> w) {
  if (!is_torchscript_name(name)) {
    return Error{fmt::format(
        "--model {}: export writes into a TorchScript module; give --model torchscript:PATH, "
        "the module the run trained",
        name)};
  }
  TorchScriptExport request;
  request.trained = std::string(name.substr(kPrefix.size()));
  request.into = into;
  request.w = w;
  for (const auto& [flag, path] : {std::pair{"--model", request.trained}, {"--into", into}}) {
    if (path.empty()) continue;
    const std::string_view shown = std::string_view(flag) == "--model" ? name : path;
    if (auto s = check_module_file(flag, shown, path); !s) return s.error();
  }
  const Plugin& p = plugin();
  if (!p.export_to) return Error{p.error};
  TorchScriptExported out;
  std::string error;
  if (!p.export_to(request, out, error)) return Error{error};
  return TorchScriptFiles{std::move(out.module), std::move(out.state_dict)};
}

}  // namespace stalesgd::model
