// Opening a file the user named, for reading: refused in one line unless it is a regular file,
// so that a FIFO cannot hang a command and a device such as /dev/zero cannot fill the memory
// (docs/reliability.md, "a path that is not a regular file").
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "stalesgd/util/result.hpp"

namespace stalesgd {

// An open descriptor of a regular file, closed when it goes.
class RegularFile {
 public:
  RegularFile() = default;
  RegularFile(int fd, std::uint64_t size) : fd_(fd), size_(size) {}
  RegularFile(RegularFile&& other) noexcept;
  RegularFile& operator=(RegularFile&& other) noexcept;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  ~RegularFile();

  int fd() const { return fd_; }
  std::uint64_t size() const { return size_; }  // at open time
  // Gives up the descriptor (for an API that closes it, such as zlib's gzdopen).
  int release();

 private:
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

// Takes `fd` (open for reading, O_NONBLOCK so that a FIFO did not block the open) and keeps it
// when fstat says it is a regular file; otherwise closes it and refuses: "NAME: not a regular
// file (a FIFO (named pipe)); FIX".
Result<RegularFile> keep_if_regular(int fd, std::string_view name, std::string_view fix);

// The most a text file handed in (a TOML file, a trace, a machine file, a summary) may hold:
// far above any real one, below what would exhaust the memory.
constexpr std::uint64_t kTextFileMost = std::uint64_t{1} << 30;

// `path` opened for reading without blocking (a FIFO with no writer opens at once) and checked
// through its descriptor, so what is checked is what is read. `what` starts the message (for
// instance "--model-file model.npy"; the path when empty); `fix` ends it.
Result<RegularFile> open_regular_file(const std::filesystem::path& path, std::string_view what,
                                      std::string_view fix);

// The whole of `path` (through open_regular_file), refused when it holds more than `max_bytes`.
Result<std::string> read_regular_file(const std::filesystem::path& path, std::string_view what,
                                      std::string_view fix, std::uint64_t max_bytes);

}  // namespace stalesgd
