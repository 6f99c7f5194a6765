// This process's cgroup limits (v2's one hierarchy or v1's controller), for memory_room and
// thread_room (docs/reliability.md, "Memory and threads").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace stalesgd {

struct CgroupLimit {
  std::uint64_t limit = 0;
  std::uint64_t used = 0;
};

// The limit and use of `controller` ("memory", "pids") from the files named for v2 and v1
// (memory.max and memory.current; memory.limit_in_bytes and memory.usage_in_bytes), under the
// usual mount points; none when no limit is set ("max", or 2^62 and above).
std::optional<CgroupLimit> cgroup_limit(const std::string& controller, const std::string& v2_limit,
                                        const std::string& v2_used, const std::string& v1_limit,
                                        const std::string& v1_used);

// The first word of a file as a number; none for "max", a missing file or another word.
std::optional<std::uint64_t> read_number_file(const std::string& path);

}  // namespace stalesgd
