// How much memory this process can have: for refusing, up front and in one line, a request
// that could only end in std::bad_alloc or the OOM killer, and for naming the limit when an
// allocation fails anyway (docs/reliability.md, "Memory and threads").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "stalesgd/util/result.hpp"

namespace stalesgd {

// The machine's physical memory (sysconf), or the address-space limit (ulimit -v) when that is
// lower; 0 when neither is known.
std::uint64_t memory_bytes();

// What this process may still allocate, and the limit that decides it.
struct MemoryRoom {
  std::uint64_t bytes = 0;  // 0: no limit is known
  std::string limit;        // e.g. "ulimit -v of 2.4 GB, 0.3 GB in use"
};

// The tightest of: the address-space limit (ulimit -v) less the address space in use, the
// memory cgroup's limit (v2 memory.max, v1 memory.limit_in_bytes) less its use, and the
// machine's memory and swap.
MemoryRoom memory_room();

// "3.1 GB", "420 MB", "12 kB": a size in a message.
std::string byte_size_text(double bytes);

// `need` bytes for `what` ("data.npz: x_train and x_test as float32", say): refused in one line
// naming the size and the limit, ending with `fix`, when they cannot fit in memory_room().
Status check_memory(std::uint64_t need, std::string_view what, std::string_view fix);

// The one line for an allocation that failed (std::bad_alloc) in `where` ("worker 3", "reading
// the data"), naming the limit.
std::string out_of_memory_message(std::string_view where);

}  // namespace stalesgd
