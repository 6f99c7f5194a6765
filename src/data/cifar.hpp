// Loader for the CIFAR-10 binary format: records of 1 label byte + 3072 pixel bytes
// (1024 red, 1024 green, 1024 blue, each row-major 32x32), i.e. already channels-first.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "stalesgd/data/dataset.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

inline constexpr std::size_t kCifarRecordBytes = 3073;
inline constexpr ImageShape kCifarShape{3, 32, 32};

// Concatenates the records of `files` into one Split; `fix` says how to get good files. `crc`,
// when given, is continued over the files' bytes as read (Dataset::digest).
Result<Split> load_cifar_split(const std::vector<std::filesystem::path>& files,
                               const std::string& fix, std::uint32_t* crc = nullptr);

// Appends the records of one batch file's bytes (decompressed) to `split` (shape kCifarShape);
// `file` names it in messages. load_cifar_split calls it for each file; the fuzzer calls it
// directly (docs/reliability.md).
Status append_cifar_batch(std::span<const std::uint8_t> bytes, const std::filesystem::path& file,
                          const std::string& fix, Split& split);

}  // namespace stalesgd
