// CRC-32 (zlib's) of byte ranges, continued across calls: the checkpoint's envelope, the
// journal files' identity at resume and the data set's identity (docs/reliability.md).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace stalesgd {

// The CRC-32 of `bytes` continued from `crc` (0 for the first range).
std::uint32_t crc32_of(std::string_view bytes, std::uint32_t crc = 0);
std::uint32_t crc32_of(std::span<const std::uint8_t> bytes, std::uint32_t crc = 0);

}  // namespace stalesgd
