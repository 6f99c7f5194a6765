// The live progress line on a terminal's stderr, shared by everything that writes to stderr:
// a log line or an error line erases it first and it is redrawn after, so that the two never run
// together, and it is cut to the terminal's width, so that it never wraps into copies of itself
// (docs/cli.md, "Logging and progress").
//
// Under mpirun stderr is a pipe to mpirun, which passes partial lines and '\r' straight on to its
// own stderr: STALESGD_LIVE_LINE=COLUMNS (tools/mpirun.sh sets it when its stderr is a terminal)
// says that the pipe ends at a terminal that wide.
//
// Thread safety: every function may be called from any thread; one mutex orders the writes.
#pragma once

#include <functional>
#include <string>

namespace stalesgd::live_line {

// Draws `text` as the live line (replacing the one drawn before), cut to the terminal's width.
void show(const std::string& text);
// Erases the live line, if one is drawn; nothing is redrawn after.
void clear();
// Runs `write`, which prints whole lines to stderr, with the live line erased before and
// redrawn after.
void around(const std::function<void()>& write);
// Whether stderr reaches a terminal: it is one, or STALESGD_LIVE_LINE names its width.
bool on_terminal();
// The width `show` cuts to: the terminal's columns less one (STALESGD_LIVE_LINE's when stderr is
// no terminal), or 79.
int width();

}  // namespace stalesgd::live_line
