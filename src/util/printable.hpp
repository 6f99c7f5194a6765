// Text from outside (a file's bytes, a flag's value, a forged checkpoint's strings) echoed in an
// error: every error is one line (docs/reliability.md), so its control characters are shown
// as '?' (run.log escapes them itself, util/log_escape.hpp).
#pragma once

#include <string>
#include <string_view>

namespace stalesgd {

// `text` with each control character (below 0x20, and 0x7f) replaced by '?'.
std::string printable(std::string_view text);

}  // namespace stalesgd
