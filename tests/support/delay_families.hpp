// The built-in delay families' list in an "unknown distribution" message, as this process
// prints it once a test case has registered families of its own (register_delay_family lasts
// for the process): the registered ones after the built-in ones. Without it, a test comparing
// the message would pass alone (ctest runs each case in its own process) and fail in a run of
// several cases (`stalesgd_tests "[straggler]"`).
#pragma once

#include <string>

namespace stalesgd::test {

// `message` with ", NAME" for each registered family inserted after its "use one of ..." list
// (before ", e.g. "); unchanged when no family is registered or there is no such list.
std::string with_registered_families(std::string message);

}  // namespace stalesgd::test
