// What built this program and what it links: the build type, compiler and flags (a native
// build is several times a portable one), and the libraries' versions; summary.json's
// provenance records them (docs/outputs.md).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace stalesgd {

struct BuildInfo {
  std::string type;      // CMAKE_BUILD_TYPE, e.g. "Release"
  std::string compiler;  // e.g. "GNU 12.2.0"
  std::string flags;     // the C++ flags of the build type, e.g. "-O3 -DNDEBUG"
  bool native = false;   // -march=native (STALESGD_NATIVE)
  std::string sanitize;  // "address,undefined", "thread" or ""
  // (library, version) of those linked, in a fixed order, then those noted (note_library): Open
  // MPI when the MPI engine is in, LibTorch once the TorchScript plugin is loaded.
  std::vector<std::pair<std::string, std::string>> libraries;
};

BuildInfo build_info();

// A library a part of the program links beyond the core's (the MPI engine, when it installs
// itself; the TorchScript plugin, when loaded), for build_info(); a name noted again is updated.
void note_library(std::string name, std::string version);

// "Release, GNU 12.2.0, -march=native; Eigen 3.4.0, oneTBB 2021.8, ...": one line for run.log.
std::string describe(const BuildInfo& info);

}  // namespace stalesgd
