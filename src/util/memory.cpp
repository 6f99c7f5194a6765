// memory_room: the process's address-space limit, its memory cgroup's and the machine's.
#include "util/memory.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "util/cgroup.hpp"

namespace stalesgd {
namespace {

// A field of /proc/meminfo or /proc/self/status in bytes ("MemTotal:  24 kB").
std::optional<std::uint64_t> kb_field(const char* file, std::string_view name) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name, 0) != 0 || line.size() <= name.size() || line[name.size()] != ':') {
      continue;
    }
    std::istringstream fields(line.substr(name.size() + 1));
    std::uint64_t kb = 0;
    if (fields >> kb) return kb * 1024;
  }
  return std::nullopt;
}

}  // namespace

std::uint64_t memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  std::uint64_t bytes = pages > 0 && page_size > 0 ? static_cast<std::uint64_t>(pages) *
                                                         static_cast<std::uint64_t>(page_size)
                                                   : 0;
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    const auto as = static_cast<std::uint64_t>(limit.rlim_cur);
    bytes = bytes == 0 ? as : std::min(bytes, as);
  }
  return bytes;
}

std::string byte_size_text(double bytes) {
  if (bytes >= 1e9) return fmt::format("{:.3g} GB", bytes / 1e9);
  if (bytes >= 1e6) return fmt::format("{:.3g} MB", bytes / 1e6);
  return fmt::format("{:.3g} kB", bytes / 1e3);
}

MemoryRoom memory_room() {
  MemoryRoom room;
  const auto consider = [&](std::uint64_t limit, std::uint64_t used, std::string what) {
    const std::uint64_t left = limit > used ? limit - used : 0;
    if (room.limit.empty() || left < room.bytes) {
      room.bytes = left;
      room.limit = std::move(what);
    }
  };
  rlimit as{};
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    // The address space counts every mapping, the libraries' and each thread's stack too.
    const std::uint64_t used = kb_field("/proc/self/status", "VmSize").value_or(0);
    consider(static_cast<std::uint64_t>(as.rlim_cur), used,
             fmt::format("the address-space limit (ulimit -v) of {}, {} of it in use",
                         byte_size_text(static_cast<double>(as.rlim_cur)),
                         byte_size_text(static_cast<double>(used))));
  }
  if (const auto cg = cgroup_limit("memory", "memory.max", "memory.current",
                                   "memory.limit_in_bytes", "memory.usage_in_bytes")) {
    consider(cg->limit, cg->used,
             fmt::format("the memory cgroup's limit of {}, {} of it in use",
                         byte_size_text(static_cast<double>(cg->limit)),
                         byte_size_text(static_cast<double>(cg->used))));
  }
  // The machine: memory and swap, all of it (what other processes hold may yet be freed, so
  // a refusal on this count is sure).
  const auto total = kb_field("/proc/meminfo", "MemTotal");
  if (total) {
    const std::uint64_t swap = kb_field("/proc/meminfo", "SwapTotal").value_or(0);
    consider(
        *total + swap, 0,
        fmt::format("this machine's {} of memory{}", byte_size_text(static_cast<double>(*total)),
                    swap > 0
                        ? fmt::format(" and {} of swap", byte_size_text(static_cast<double>(swap)))
                        : std::string()));
  }
  return room;
}

Status check_memory(std::uint64_t need, std::string_view what, std::string_view fix) {
  const MemoryRoom room = memory_room();
  if (room.limit.empty() || need <= room.bytes) return {};
  return Error{
      fmt::format("{}: {} needed, but this process may allocate only {} more, under {}; {}", what,
                  byte_size_text(static_cast<double>(need)),
                  byte_size_text(static_cast<double>(room.bytes)), room.limit, fix)};
}

std::string out_of_memory_message(std::string_view where) {
  const MemoryRoom room = memory_room();
  return fmt::format(
      "out of memory in {}: an allocation failed{}; free memory, raise the limit, or ask for "
      "less (fewer workers, a smaller model, batch or data set)",
      where,
      room.limit.empty()
          ? std::string()
          : fmt::format(" ({} left under {})", byte_size_text(static_cast<double>(room.bytes)),
                        room.limit));
}

}  // namespace stalesgd
