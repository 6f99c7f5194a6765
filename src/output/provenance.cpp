// Provenance: the command line, UTC times and the load average of a run.
#include "output/provenance.hpp"

#include <algorithm>
#include <ctime>

#include <fmt/format.h>

#include "util/host_info.hpp"

namespace stalesgd {

Provenance Provenance::begin(std::vector<std::string> command_line) {
  Provenance p;
  p.command_line = std::move(command_line);
  p.started = std::chrono::system_clock::now();
  p.load_at_start = load_average();
  return p;
}

std::string iso8601_utc(std::chrono::system_clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch());
  const std::time_t seconds = static_cast<std::time_t>(ms.count() / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900,
                     utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                     ms.count() % 1000);
}

std::string shell_quoted(const std::vector<std::string>& words) {
  std::string line;
  for (const auto& w : words) {
    if (!line.empty()) line += ' ';
    const bool plain = !w.empty() && w.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789-_./=:,+@%") == std::string::npos;
    if (plain) {
      line += w;
      continue;
    }
    // A control character (a newline in a path, say) would split the line it is written on:
    // such a word is written in bash's $'...' quoting, escapes that read back to the same bytes.
    if (std::any_of(w.begin(), w.end(),
                    [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
      line += "$'";
      for (const char c : w) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '\\' || c == '\'') {
          line += '\\';
          line += c;
        } else if (u < 0x20 || u == 0x7f) {
          line += fmt::format("\\x{:02x}", u);
        } else {
          line += c;
        }
      }
      line += '\'';
      continue;
    }
    line += '\'';
    for (char c : w) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

}  // namespace stalesgd
