// The zip container of an .npz file, read from memory: the central directory (with the zip64
// records and extra fields numpy's writer uses for large arrays) and each entry's bytes, stored
// or deflated, checked against its CRC-32. Errors are one line naming the file and the fix.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "stalesgd/util/result.hpp"

namespace stalesgd {

// One file of the archive as its central directory describes it.
struct ZipEntry {
  std::string name;  // as stored; messages print it through printable() (util/printable.hpp)
  std::uint16_t flags = 0;
  std::uint16_t method = 0;  // 0 stored, 8 deflated
  std::uint32_t crc = 0;
  std::uint64_t compressed_size = 0;
  std::uint64_t size = 0;
  std::uint64_t local_offset = 0;
};

// An entry's bytes: a view into the archive when stored, its own buffer when inflated.
class ZipData {
 public:
  ZipData() = default;
  explicit ZipData(std::span<const std::uint8_t> view) : view_(view) {}
  explicit ZipData(std::vector<std::uint8_t> owned) : owned_(std::move(owned)), inflated_(true) {}
  std::span<const std::uint8_t> bytes() const {
    return inflated_ ? std::span<const std::uint8_t>(owned_) : view_;
  }

 private:
  std::vector<std::uint8_t> owned_;
  std::span<const std::uint8_t> view_;
  bool inflated_ = false;
};

// The entries of the archive `bytes`; `file` names it in messages.
Result<std::vector<ZipEntry>> read_zip_directory(std::span<const std::uint8_t> bytes,
                                                 const std::string& file);

// The first `limit` bytes of the entry (all of it by default). The CRC-32 is checked only when
// the whole entry is read.
Result<ZipData> read_zip_entry(std::span<const std::uint8_t> bytes, const ZipEntry& entry,
                               const std::string& file, std::uint64_t limit = UINT64_MAX);

}  // namespace stalesgd
