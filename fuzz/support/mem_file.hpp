// MemFile: bytes behind a path without touching the disk (a memfd, read as /proc/self/fd/N), so
// a harness drives a reader that takes a path, zlib's gzopen included, as it reads a real file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>

namespace stalesgd::fuzz {

class MemFile {
 public:
  MemFile();  // aborts when the kernel has no memfd: the harness cannot run without it
  ~MemFile();
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;

  // Replaces the contents with `bytes`; returns the path that reads them.
  const std::filesystem::path& write(std::span<const std::uint8_t> bytes);
  const std::filesystem::path& path() const { return path_; }

 private:
  int fd_ = -1;
  std::filesystem::path path_;
};

}  // namespace stalesgd::fuzz
