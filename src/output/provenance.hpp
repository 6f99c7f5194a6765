// Provenance: where a run's numbers came from, recorded in its summary.json (docs/outputs.md):
// the command line, when the run started and ended, and the data it read. The writer adds
// stalesgd's version and commit, the build (type, compiler, flags, the libraries' versions:
// util/build_info.hpp) and the host (name, CPU model and cores, load average).
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace stalesgd {

struct Provenance {
  std::vector<std::string> command_line;  // argv as given; empty: not recorded (a library call)
  std::chrono::system_clock::time_point started{};
  std::chrono::system_clock::time_point ended{};
  double load_at_start = -1.0;  // 1-minute load average when the run started; < 0: unknown
  std::string dataset;          // the data set's name, and the CRC-32 of its files' bytes as
  std::string data_digest;      // read (Dataset::digest); empty: not recorded

  // A provenance starting now, with the load average of this moment.
  static Provenance begin(std::vector<std::string> command_line);
};

// "2026-11-30T18:40:00.123Z": UTC, ISO 8601, milliseconds.
std::string iso8601_utc(std::chrono::system_clock::time_point t);

// The command line as one string a POSIX shell reads back to the same words, on one line: a
// word holding a control character is written in $'...' quoting (POSIX.1-2024; bash, zsh and
// ksh read it, dash 0.5 does not).
std::string shell_quoted(const std::vector<std::string>& words);

}  // namespace stalesgd
