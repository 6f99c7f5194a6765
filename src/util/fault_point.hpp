// Fault injection: with STALESGD_FAULT=POINT in the environment, the named point throws as a bug
// there would, so that the exit status of an internal error (3) and what a run writes on one are
// tested through the real process (docs/cli.md, "Exit status"; docs/reliability.md). Points:
// "command" -- a command's own thread, before it does anything; "worker" -- a worker's
// computation: a real-clock worker thread (Hogwild!'s too) before its first gradient, and on the
// virtual clock the first gradient computed; "thread" -- the real clock's start of each worker
// thread (the thread engine's).
// STALESGD_FAULT=POINT:alloc throws std::bad_alloc instead (memory running out), and
// POINT:threads the std::system_error of a thread the system would not start (EAGAIN). Without
// the variable a point does nothing.
#pragma once

#include <string_view>

namespace stalesgd {

void fault_point(std::string_view point);

}  // namespace stalesgd
