// Opening only regular files, without ever blocking: a FIFO, a device or a socket where a file
// is expected is refused before a byte is read, so that it cannot hang a command or fill the
// memory (docs/reliability.md, "a path that is not a regular file"; docs/serve.md, "Limits").
// The file is opened with O_NONBLOCK (a FIFO with no writer opens at once instead of waiting for
// one), O_CLOEXEC and O_NOCTTY, and the descriptor itself is checked with fstat, so a file
// swapped for a FIFO after a stat of its path is refused too.
//
// Thread safety: a RegularFile may be read from any number of threads at once (read_at() is a
// pread); moving or destroying it is the owner's alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "stalesgd/util/result.hpp"

namespace stalesgd {

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
  // file"); empty otherwise.
  const std::string& why() const { return why_; }
  // For kRefused: what the path is ("a FIFO", "a character device", "a folder"), or empty when
  // the open failed, with the reason in error_number().
  const std::string& kind() const { return kind_; }
  // Why open(2) failed: for kMissing ENOENT or ENOTDIR (a path through a file), for kRefused
  // the reason when kind() is empty; 0 otherwise.
  int error_number() const { return errno_; }
  // From the fstat at open.
  std::uint64_t size() const { return size_; }
  std::uint64_t inode() const { return inode_; }
  int fd() const { return fd_; }

  // Up to `n` bytes from `offset` into `buffer`: fewer only at the end of the file; -1 when the
  // read fails (an I/O error).
  std::int64_t read_at(std::uint64_t offset, char* buffer, std::size_t n) const;

 private:
  RegularFile() = default;

  int fd_ = -1;
  FileState state_ = FileState::kMissing;
  std::string why_, kind_;
  int errno_ = 0;
  std::uint64_t size_ = 0, inode_ = 0;
};

// A file's bytes, read through RegularFile.
struct FileBytes {
  FileState state = FileState::kMissing;
  std::string bytes;  // for kOpen
  std::string why;    // for kRefused
};

// At most `max_bytes` of the file. With `whole`, a file longer than that is refused (why()
// says "... is over N bytes"); without it, its first `max_bytes` are returned.
FileBytes read_regular_file(const std::filesystem::path& path, std::size_t max_bytes,
                            bool whole = true);

// For a file the user named on the command line or in a config: the same, as a one-line
// refusal "WHAT: not a regular file (a FIFO); FIX" (`what` is the path when empty; `fix` ends
// the message when given).
Result<RegularFile> open_user_file(const std::filesystem::path& path, std::string_view what,
                                   std::string_view fix);
Result<std::string> read_user_file(const std::filesystem::path& path, std::string_view what,
                                   std::string_view fix, std::uint64_t max_bytes);

// The most a text file handed in (a TOML file, a trace, a machine file, a summary) may hold:
// far above any real one, below what would exhaust the memory.
constexpr std::uint64_t kTextFileMost = std::uint64_t{1} << 30;

}  // namespace stalesgd
