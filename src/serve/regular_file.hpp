// RegularFile: how `stalesgd serve` opens every file it reads, so that no file can block it: a
// FIFO, a device or a socket under the served folder is refused before a byte is read
// (docs/serve.md, "Limits"). The file is opened with O_NONBLOCK (a FIFO with no writer opens at
// once instead of waiting for one) and O_CLOEXEC, and the descriptor itself is checked with
// fstat, so a file swapped for a FIFO after a stat of its path is refused too.
//
// Thread safety: a RegularFile may be read from any number of threads at once (read_at() is a
// pread); moving or destroying it is the owner's alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace stalesgd::serve {

enum class FileState {
  kOpen,     // a regular file, open for reading
  kMissing,  // no such file (a run that has not written it yet): not a fault
  kRefused,  // there, but not readable as a regular file: why() says what it is
};

class RegularFile {
 public:
  static RegularFile open(const std::filesystem::path& path);

  RegularFile(RegularFile&& other) noexcept;
  RegularFile& operator=(RegularFile&& other) noexcept;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  ~RegularFile();

  FileState state() const { return state_; }
  bool is_open() const { return state_ == FileState::kOpen; }
  // For kRefused, one line naming the file and what it is ("... is a FIFO, not a regular
  // file: serve reads only regular files"); empty otherwise.
  const std::string& why() const { return why_; }
  // From the fstat at open.
  std::uint64_t size() const { return size_; }
  std::uint64_t inode() const { return inode_; }

  // Up to `n` bytes from `offset` into `buffer`: fewer only at the end of the file; -1 when the
  // read fails (an I/O error).
  std::int64_t read_at(std::uint64_t offset, char* buffer, std::size_t n) const;

 private:
  RegularFile() = default;

  int fd_ = -1;
  FileState state_ = FileState::kMissing;
  std::string why_;
  std::uint64_t size_ = 0, inode_ = 0;
};

// The most read_regular_file() is asked for: summary.json, runs.csv, results.csv, workers.csv
// and the page's own files are far smaller; a larger one is refused rather than loaded.
inline constexpr std::size_t kMaxSmallFileBytes = std::size_t{16} << 20;

// A small file's bytes (summary.json, runs.csv, the page's files), read through RegularFile.
struct FileBytes {
  FileState state = FileState::kMissing;
  std::string bytes;  // for kOpen
  std::string why;    // for kRefused
};

// At most `max_bytes` of the file. With `whole`, a file longer than that is refused (a table
// that large is not one stalesgd wrote); without it, its first `max_bytes` are returned.
FileBytes read_regular_file(const std::filesystem::path& path, std::size_t max_bytes,
                            bool whole = true);

}  // namespace stalesgd::serve
