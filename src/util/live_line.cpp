// The live line (util/live_line.hpp): "\r\033[K" erases the row the cursor is on, so a line that
// fits the row is erased whole; a line cut to the width never wraps to a second row.
#include "util/live_line.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace stalesgd::live_line {
namespace {

std::mutex g_mutex;
std::string g_text;    // GUARDED_BY(g_mutex): the line drawn now
bool g_drawn = false;  // GUARDED_BY(g_mutex)

void erase_locked() {
  if (!g_drawn) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  g_drawn = false;
}

void draw_locked() {
  std::fputs("\r\033[K", stderr);
  std::fputs(g_text.c_str(), stderr);
  std::fflush(stderr);
  g_drawn = true;
}

// STALESGD_LIVE_LINE's columns; 0 when unset or not a width.
int forwarded_columns() {
  const char* v = std::getenv("STALESGD_LIVE_LINE");
  if (v == nullptr) return 0;
  char* end = nullptr;
  const long columns = std::strtol(v, &end, 10);
  return end != v && *end == '\0' && columns > 1 && columns < 10000 ? static_cast<int>(columns) : 0;
}

}  // namespace

bool on_terminal() {
  return isatty(STDERR_FILENO) != 0 || forwarded_columns() > 0;
}

int width() {
  winsize ws{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1) return ws.ws_col - 1;
  if (const int columns = forwarded_columns(); columns > 0) return columns - 1;
  return 79;
}

void show(const std::string& text) {
  const auto cut = static_cast<std::size_t>(width());
  std::lock_guard lock(g_mutex);
  g_text = text.size() > cut ? text.substr(0, cut) : text;
  draw_locked();
}

void clear() {
  std::lock_guard lock(g_mutex);
  erase_locked();
  g_text.clear();
}

void around(const std::function<void()>& write) {
  std::lock_guard lock(g_mutex);
  const bool was_drawn = g_drawn;
  erase_locked();
  write();
  if (was_drawn) draw_locked();
}

}  // namespace stalesgd::live_line
