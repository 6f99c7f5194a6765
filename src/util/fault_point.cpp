// fault_point: STALESGD_FAULT's injected bug (see fault_point.hpp).
#include "util/fault_point.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace stalesgd {

void fault_point(std::string_view point) {
  // Read once: the virtual engine passes this point at every gradient.
  static const char* const wanted = std::getenv("STALESGD_FAULT");
  if (wanted != nullptr && point == wanted) {
    throw std::runtime_error("fault injected at '" + std::string(point) + "' (STALESGD_FAULT)");
  }
}

}  // namespace stalesgd
