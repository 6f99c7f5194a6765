// CIFAR-10 binary batches read into one Split (the format is in cifar.hpp).
#include "data/cifar.hpp"

#include <fmt/format.h>

#include "data/file_bytes.hpp"
#include "util/crc32.hpp"

namespace stalesgd {

Result<Split> load_cifar_split(const std::vector<std::filesystem::path>& files,
                               const std::string& fix, std::uint32_t* crc) {
  Split split;
  split.shape = kCifarShape;
  for (const auto& path : files) {
    auto bytes = read_file_bytes(path, fix);
    if (!bytes) return bytes.error();
    if (crc != nullptr) *crc = crc32_of(std::span<const std::uint8_t>(*bytes), *crc);
    if (auto s = append_cifar_batch(*bytes, path, fix, split); !s) return s.error();
  }
  return split;
}

Status append_cifar_batch(std::span<const std::uint8_t> bytes, const std::filesystem::path& file,
                          const std::string& fix, Split& split) {
  const std::size_t dim = kCifarShape.dim();
  constexpr float kScale = 1.0f / 255.0f;
  if (bytes.empty() || bytes.size() % kCifarRecordBytes != 0) {
    return Error{
        fmt::format("{}: size {} bytes is not a positive multiple of the {}-byte "
                    "CIFAR-10 record (truncated or not a CIFAR-10 binary batch); {}",
                    file.string(), bytes.size(), kCifarRecordBytes, fix)};
  }
  const std::size_t n = bytes.size() / kCifarRecordBytes;
  split.features.reserve(split.features.size() + n * dim);
  for (std::size_t r = 0; r < n; ++r) {
    const std::uint8_t* rec = bytes.data() + r * kCifarRecordBytes;
    if (rec[0] >= 10) {
      return Error{fmt::format("{}: label {} of record {} is out of range [0, 10); {}",
                               file.string(), int{rec[0]}, r, fix)};
    }
    split.labels.push_back(rec[0]);
    for (std::size_t p = 0; p < dim; ++p) split.features.push_back(rec[1 + p] * kScale);
  }
  split.count += n;
  return {};
}

}  // namespace stalesgd
