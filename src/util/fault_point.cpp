// fault_point: STALESGD_FAULT's injected failures (see fault_point.hpp).
#include "util/fault_point.hpp"

#include <cerrno>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>

namespace stalesgd {

void fault_point(std::string_view point) {
  // Read once: the virtual engine passes this point at every gradient.
  static const std::string wanted = [] {
    const char* v = std::getenv("STALESGD_FAULT");
    return v != nullptr ? std::string(v) : std::string();
  }();
  if (wanted.empty() || wanted.compare(0, point.size(), point) != 0) return;
  const std::string_view kind = std::string_view(wanted).substr(point.size());
  if (kind.empty()) {
    throw std::runtime_error("fault injected at '" + std::string(point) + "' (STALESGD_FAULT)");
  }
  if (kind == ":alloc") throw std::bad_alloc();
  if (kind == ":threads") {
    throw std::system_error(EAGAIN, std::generic_category(), "Resource temporarily unavailable");
  }
}

}  // namespace stalesgd
