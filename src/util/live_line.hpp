// The live progress line on a terminal's stderr, shared by everything that writes to stderr:
// a log line or an error line erases it first and it is redrawn after, so that the two never run
// together, and it is cut to the terminal's width, so that it never wraps into copies of itself
// (docs/cli.md, "Logging and progress").
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
// The width `show` cuts to: the terminal's columns less one, or 79 when stderr is no terminal.
int width();

}  // namespace stalesgd::live_line
