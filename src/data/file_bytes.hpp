// Reads a whole file into memory, decompressing gzip transparently (zlib reads plain files as is).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "stalesgd/util/result.hpp"

namespace stalesgd {

Result<std::vector<std::uint8_t>> read_file_bytes(const std::filesystem::path& path,
                                                  const std::string& fix);

}  // namespace stalesgd
