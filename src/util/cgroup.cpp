// cgroup_limit: /proc/self/cgroup's line for a controller, and its files under /sys/fs/cgroup.
#include "util/cgroup.hpp"

#include <fstream>

namespace stalesgd {

std::optional<std::uint64_t> read_number_file(const std::string& path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word == "max") return std::nullopt;
  try {
    return static_cast<std::uint64_t>(std::stoull(word));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<CgroupLimit> cgroup_limit(const std::string& controller, const std::string& v2_limit,
                                        const std::string& v2_used, const std::string& v1_limit,
                                        const std::string& v1_used) {
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);) {
    const auto a = line.find(':');
    const auto b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    const bool v2 = controllers.empty() && line.rfind("0:", 0) == 0;
    if (!v2 && controllers.find(controller) == std::string::npos) continue;
    const std::string mount = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/" + controller;
    // In a container the path may be the host's: the mount's root is then the cgroup.
    for (const std::string& dir : {mount + path, mount}) {
      const auto limit = read_number_file(dir + "/" + (v2 ? v2_limit : v1_limit));
      if (!limit) continue;
      if (*limit >= (std::uint64_t{1} << 62)) return std::nullopt;
      return CgroupLimit{*limit,
                         read_number_file(dir + "/" + (v2 ? v2_used : v1_used)).value_or(0)};
    }
  }
  return std::nullopt;
}

}  // namespace stalesgd
