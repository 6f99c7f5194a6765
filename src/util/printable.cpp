// printable(): control characters as '?', for one-line errors (util/printable.hpp).
#include "util/printable.hpp"

namespace stalesgd {

std::string printable(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out;
}

}  // namespace stalesgd
