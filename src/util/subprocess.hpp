// Runs an external program (npm, tar, sha256sum, apt-get, curl) without a shell, so that
// paths are never re-parsed. Used only by `data fetch`.
#pragma once

#include <string>
#include <vector>

namespace stalesgd {

struct ProcessResult {
  int exit_code = -1;  // -1 when the program could not be started
  std::string output;  // stdout and stderr, merged
};

ProcessResult run_process(const std::vector<std::string>& argv);

// True when `program` is found on PATH.
bool program_available(const std::string& program);

}  // namespace stalesgd
