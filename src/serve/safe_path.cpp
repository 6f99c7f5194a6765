// Resolving URL paths under the served folder, refusing anything that could leave it.
#include "serve/safe_path.hpp"

#include <iterator>

namespace stalesgd::serve {
namespace fs = std::filesystem;

bool is_inside(const fs::path& root, const fs::path& path) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p) {
    // A trailing "" element (a root written with a final '/') matches anything below it.
    if (r->empty() && std::next(r) == root.end()) return true;
    if (p == path.end() || *r != *p) return false;
  }
  return true;
}

ResolvedPath resolve_inside(const fs::path& root, std::string_view relative) {
  const auto refuse = [](std::string why) { return ResolvedPath{{}, 403, std::move(why)}; };
  if (relative.empty()) return {{}, 404, "no file named"};
  if (relative.front() == '/') return refuse("an absolute path is outside the served folder");
  if (relative.find('\0') != std::string_view::npos ||
      relative.find('\\') != std::string_view::npos) {
    return refuse("the path holds a NUL or a backslash");
  }
  // Component by component: "..", "." and empty parts ("a//b") are refused outright rather
  // than normalised, so that no spelling of a path reaches above the root.
  std::size_t start = 0;
  while (start <= relative.size()) {
    const auto slash = relative.find('/', start);
    const auto part = relative.substr(
        start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (part == ".." || part == "." || part.empty()) {
      return refuse("a path with '..', '.' or an empty part is refused");
    }
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  const fs::path joined = root / fs::path(std::string(relative));
  std::error_code ec;
  const fs::path real = fs::canonical(joined, ec);
  if (ec) return {{}, 404, "no such file"};
  // A symlink inside the folder may point anywhere; only where it lands counts.
  if (!is_inside(root, real)) return refuse("the path leads outside the served folder");
  if (!fs::is_regular_file(real, ec)) return {{}, 404, "not a file"};
  return {real, 200, {}};
}

}  // namespace stalesgd::serve
