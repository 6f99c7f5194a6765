// build_info(): the build's settings (compile definitions CMake sets on this file alone,
// src/CMakeLists.txt) and the versions of the libraries, from their headers and runtimes.
#include "util/build_info.hpp"

#include <mutex>

#include <fmt/core.h>
#include <fmt/format.h>
#include <oneapi/tbb/version.h>
#include <spdlog/version.h>
#include <toml++/toml.h>
#include <zlib.h>
#include <Eigen/Core>
#include <nlohmann/json.hpp>

#ifndef STALESGD_BUILD_TYPE
#define STALESGD_BUILD_TYPE ""
#define STALESGD_COMPILER ""
#define STALESGD_CXX_FLAGS ""
#define STALESGD_NATIVE_BUILD 0
#define STALESGD_SANITIZERS ""
#endif

namespace stalesgd {
namespace {

// Libraries a part of the program noted when it was installed (the MPI backend): main's thread,
// before any other thread starts, but guarded all the same.
std::mutex g_noted_mutex;
std::vector<std::pair<std::string, std::string>> g_noted;  // GUARDED_BY(g_noted_mutex)

}  // namespace

void note_library(std::string name, std::string version) {
  std::lock_guard lock(g_noted_mutex);
  for (auto& [noted, v] : g_noted) {
    if (noted == name) {
      v = std::move(version);
      return;
    }
  }
  g_noted.emplace_back(std::move(name), std::move(version));
}

BuildInfo build_info() {
  static const BuildInfo base = [] {
    BuildInfo b{STALESGD_BUILD_TYPE,        STALESGD_COMPILER,   STALESGD_CXX_FLAGS,
                STALESGD_NATIVE_BUILD == 1, STALESGD_SANITIZERS, {}};
    b.libraries = {
        {"Eigen",
         fmt::format("{}.{}.{}", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION)},
        // The runtime's: the shared library this process loaded.
        {"oneTBB", TBB_runtime_version()},
        {"spdlog", fmt::format("{}.{}.{}", SPDLOG_VER_MAJOR, SPDLOG_VER_MINOR, SPDLOG_VER_PATCH)},
        {"fmt",
         fmt::format("{}.{}.{}", FMT_VERSION / 10000, FMT_VERSION / 100 % 100, FMT_VERSION % 100)},
        {"nlohmann-json", fmt::format("{}.{}.{}", NLOHMANN_JSON_VERSION_MAJOR,
                                      NLOHMANN_JSON_VERSION_MINOR, NLOHMANN_JSON_VERSION_PATCH)},
        {"toml++", fmt::format("{}.{}.{}", TOML_LIB_MAJOR, TOML_LIB_MINOR, TOML_LIB_PATCH)},
        {"zlib", zlibVersion()},
    };
    return b;
  }();
  BuildInfo info = base;
  std::lock_guard lock(g_noted_mutex);
  info.libraries.insert(info.libraries.end(), g_noted.begin(), g_noted.end());
  return info;
}

std::string describe(const BuildInfo& info) {
  std::string libraries;
  for (const auto& [name, version] : info.libraries) {
    libraries += fmt::format("{}{} {}", libraries.empty() ? "" : ", ", name, version);
  }
  return fmt::format("{}, {}, {}{}; {}", info.type.empty() ? "no build type" : info.type,
                     info.compiler, info.native ? "-march=native" : "portable",
                     info.sanitize.empty() ? "" : ", -fsanitize=" + info.sanitize, libraries);
}

}  // namespace stalesgd
