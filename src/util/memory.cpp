#include "util/memory.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

namespace stalesgd {

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

}  // namespace stalesgd
