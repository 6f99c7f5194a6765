// How many more threads this process may start, and the address space their stacks take: for
// refusing a real-clock run of more workers than the system allows, in one line, before any is
// started, and for naming the limit when a thread cannot be started anyway (docs/reliability.md,
// "Memory and threads").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "stalesgd/util/result.hpp"

namespace stalesgd {

struct ThreadRoom {
  std::uint64_t threads = 0;  // more threads the tightest limit allows; no limit known: max
  std::string limit;          // e.g. "the cgroup's pids.max of 512, 40 in use"; empty: none
};

// The tightest of: the kernel's threads-max less the threads running, the pids cgroup's
// pids.max less its use, and (not for root) RLIMIT_NPROC less this process's threads.
ThreadRoom thread_room();

// The address space a new thread's stack reserves (the default thread attributes').
std::uint64_t thread_stack_bytes();

// `more` threads for `what` ("--workers 4096 on the real clock"): refused in one line when the
// thread limits or their stacks under ulimit -v cannot allow them; the line ends with `fix`.
Status check_threads(std::uint64_t more, std::string_view what, std::string_view fix);

// The one line for a thread the system would not start (EAGAIN) in `where`.
std::string out_of_threads_message(std::string_view where);

}  // namespace stalesgd
