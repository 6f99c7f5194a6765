// stalesgd::version(). git_commit() is defined in a file the build generates
// (cmake/git_commit.cmake), so that a new commit recompiles one small file and nothing else.
#include "stalesgd/version.hpp"

#ifndef STALESGD_VERSION
#error "STALESGD_VERSION is set by src/CMakeLists.txt from project(VERSION)"
#endif

std::string_view stalesgd::version() {
  return STALESGD_VERSION;
}
