// The version of the stalesgd library and the commit it was built from, both fixed at build time
// (`stalesgd --version`; summary.json records them).
#pragma once

#include <string_view>

namespace stalesgd {

// "0.1.0": the project(VERSION ...) of the top-level CMakeLists.txt.
std::string_view version();

// The short hash of the checkout the library was built from, e.g. "8ec2a96", with "-dirty" when
// the work tree had uncommitted changes (untracked files included), or "unknown" when it was not
// built from a git checkout (a tarball). Refreshed on every build, not only at configure time.
std::string_view git_commit();

}  // namespace stalesgd
