// How much memory this process can have: for refusing, up front and in one line, a request
// that could only end in std::bad_alloc or the OOM killer.
#pragma once

#include <cstdint>

namespace stalesgd {

// The machine's physical memory (sysconf), or the address-space limit (ulimit -v) when that is
// lower; 0 when neither is known.
std::uint64_t memory_bytes();

}  // namespace stalesgd
