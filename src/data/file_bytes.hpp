// Reads a whole file into memory, decompressing gzip transparently (zlib reads plain files as is).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "stalesgd/util/result.hpp"

namespace stalesgd {

// `fix` ends the message when getting the file again helps (a missing or corrupt file).
Result<std::vector<std::uint8_t>> read_file_bytes(const std::filesystem::path& path,
                                                  const std::string& fix);

// The one line for a file the system would not open, from its errno: a missing file is "file
// not found; <fix>", a denied one "permission denied reading <path>" (fetching it again would
// not help), anything else the system's reason with <fix>.
Error read_error(const std::filesystem::path& path, int errnum, const std::string& fix);

}  // namespace stalesgd
