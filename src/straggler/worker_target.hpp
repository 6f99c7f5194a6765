// Worker targets of the delay language and of the lists written like it (docs/stragglers.md):
// "w3", "w0-3" (both ends included) or "*" (every worker).
#pragma once

#include <string_view>
#include <utility>

#include "stalesgd/util/result.hpp"

namespace stalesgd::spec {

// The workers [first, last] that `target` names among `workers`; the error is one line naming the
// target and the fix.
Result<std::pair<int, int>> parse_target(std::string_view target, int workers);

}  // namespace stalesgd::spec
