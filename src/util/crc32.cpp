// CRC-32 with zlib, fed in pieces: zlib takes uInt lengths.
#include "util/crc32.hpp"

#include <zlib.h>

#include <algorithm>

namespace stalesgd {

std::uint32_t crc32_of(std::span<const std::uint8_t> bytes, std::uint32_t crc) {
  uLong c = crc;
  for (std::size_t at = 0; at < bytes.size();) {
    const std::size_t n = std::min<std::size_t>(bytes.size() - at, 1u << 30);
    c = crc32(c, bytes.data() + at, static_cast<uInt>(n));
    at += n;
  }
  return static_cast<std::uint32_t>(c);
}

std::uint32_t crc32_of(std::string_view bytes, std::uint32_t crc) {
  return crc32_of(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()),
                  crc);
}

}  // namespace stalesgd
