// Loader for the CIFAR-10 binary format: records of 1 label byte + 3072 pixel bytes
// (1024 red, 1024 green, 1024 blue, each row-major 32x32), i.e. already channels-first.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "stalesgd/data/dataset.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

inline constexpr std::size_t kCifarRecordBytes = 3073;
inline constexpr ImageShape kCifarShape{3, 32, 32};

// Concatenates the records of `files` into one Split; `fix` says how to get good files.
Result<Split> load_cifar_split(const std::vector<std::filesystem::path>& files,
                               const std::string& fix);

}  // namespace stalesgd
