// The "use one of ..." list with the registered delay families; delay_families.hpp.
#include "support/delay_families.hpp"

#include "stalesgd/straggler/delay_family.hpp"

namespace stalesgd::test {

std::string with_registered_families(std::string message) {
  const auto list = message.find("use one of ");
  if (list == std::string::npos) return message;
  const auto end = message.find(", e.g. ", list);
  if (end == std::string::npos) return message;
  std::string own;
  for (const auto& name : registered_delay_families()) own += ", " + name;
  return message.insert(end, own);
}

}  // namespace stalesgd::test
