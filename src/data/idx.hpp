// Loader for the IDX format of MNIST and Fashion-MNIST (raw or gzip-compressed files).
// Every structural problem (missing file, wrong magic, truncation, count or size mismatch,
// out-of-range label) is an Error naming the file, the problem and the fix.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>

#include "stalesgd/data/dataset.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

struct IdxExpect {
  std::optional<ImageShape> shape;  // reject images of another size when set
  int num_classes = 10;             // labels must lie in [0, num_classes)
  std::string fix;                  // how to get good files, e.g. "run `stalesgd data fetch mnist`"
};

// Reads an images file (magic 0x00000803) and a labels file (0x00000801) into one Split.
// A path ending in .gz is decompressed; otherwise, if the path is missing but path + ".gz"
// exists, that file is read. `crc`, when given, is continued over both files' bytes as read
// (decompressed): the data set's identity (Dataset::digest).
Result<Split> load_idx_split(const std::filesystem::path& images,
                             const std::filesystem::path& labels, const IdxExpect& expect,
                             std::uint32_t* crc = nullptr);

// The same checks on the two files' bytes already in memory (decompressed); the paths only name
// the files in messages. load_idx_split reads both files and calls it; the fuzzer calls it
// directly (docs/reliability.md).
Result<Split> parse_idx_split(std::span<const std::uint8_t> images,
                              std::span<const std::uint8_t> labels,
                              const std::filesystem::path& images_file,
                              const std::filesystem::path& labels_file, const IdxExpect& expect);

}  // namespace stalesgd
