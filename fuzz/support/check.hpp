// FUZZ_CHECK: a property a harness asserts beyond "no crash, no UB"; a failure prints the
// property and aborts, which libFuzzer reports as a crash with the input saved.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

#define FUZZ_CHECK(cond)                                                               \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      std::fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                    \
    }                                                                                  \
  } while (false)

namespace stalesgd::fuzz {

// An Error's message is one non-empty line (util/result.hpp) that the CLI prints as is: echoed
// input has its control characters replaced (as spec::printable does), so none may remain.
inline bool one_line(std::string_view message) {
  if (message.empty()) return false;
  for (const char c : message) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  return true;
}

}  // namespace stalesgd::fuzz
