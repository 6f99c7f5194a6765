// Confining `stalesgd serve` to the folder it serves: a path from a URL is resolved under the
// root only if it names a file whose real location (every symlink followed) is inside it.
//
// Thread safety: pure functions of the file system's state.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace stalesgd::serve {

// Whether `path` is `root` or below it; both must already be canonical (no symlinks, no ..).
bool is_inside(const std::filesystem::path& root, const std::filesystem::path& path);

// Where a URL path leads: a regular file under the root (status 200), or the HTTP status of
// the refusal and its one-line reason: 403 for an absolute path, a ".." or "." component, a
// backslash or NUL, or a symlink that leads out of the root; 404 for no such regular file.
struct ResolvedPath {
  std::filesystem::path path;
  int status = 200;
  std::string why;
};

// `root` must be canonical; `relative` is the percent-decoded tail of the URL.
ResolvedPath resolve_inside(const std::filesystem::path& root, std::string_view relative);

}  // namespace stalesgd::serve
