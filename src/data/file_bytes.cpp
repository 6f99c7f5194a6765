// read_file_bytes: a whole file through zlib, which inflates gzip and passes plain files through.
#include "data/file_bytes.hpp"

#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "util/regular_file.hpp"
#include "util/tsan_hide.hpp"

namespace stalesgd {

Error read_error(const std::filesystem::path& path, int errnum, const std::string& fix) {
  switch (errnum) {
    case ENOENT:
      return Error{fmt::format("{}: file not found; {}", path.string(), fix)};
    case EACCES:
    case EPERM:
      return Error{
          fmt::format("permission denied reading {}; let this user read the file and search "
                      "its folders (see ls -l), or use another --data-dir",
                      path.string())};
    case 0:  // gzopen can fail without a system error (out of memory)
      return Error{fmt::format("{}: cannot open for reading; {}", path.string(), fix)};
    default:
      return Error{
          fmt::format("cannot read {} ({}); {}", path.string(), std::strerror(errnum), fix)};
  }
}

Result<std::vector<std::uint8_t>> read_file_bytes(const std::filesystem::path& path,
                                                  const std::string& fix) {
  // Through the descriptor of a regular file: a FIFO opens at once (O_NONBLOCK) and is refused
  // with a device, before a byte is read; a failed open keeps its reason.
  RegularFile regular = RegularFile::open(path);
  if (regular.state() == FileState::kMissing) return read_error(path, regular.error_number(), fix);
  if (!regular.is_open()) {
    if (regular.kind().empty()) return read_error(path, regular.error_number(), fix);
    return Error{
        fmt::format("{}: not a regular file ({}); {}", path.string(), regular.kind(), fix)};
  }
  const std::uint64_t size = regular.size();
  errno = 0;
  // gzdopen takes the descriptor's duplicate, so that gzclose and the RegularFile each close one.
  const int fd = ::dup(regular.fd());
  gzFile file = fd < 0 ? nullptr : gzdopen(fd, "rb");
  if (file == nullptr) {
    if (fd >= 0) ::close(fd);
    return read_error(path, errno, fix);
  }
  gzbuffer(file, 1 << 20);
  std::vector<std::uint8_t> bytes;
  // Hidden from ThreadSanitizer: the buffer is this thread's alone until it is returned, and
  // TSan checking each of its tens of millions of bytes cost seconds per process of the suite.
  const tsan::HiddenScope hidden;
  // A plain file's size is known; a .gz grows as it inflates.
  bytes.reserve(static_cast<std::size_t>(size));
  constexpr unsigned kChunk = 1 << 20;
  for (;;) {
    const std::size_t old = bytes.size();
    bytes.resize(old + kChunk);
    const int n = gzread(file, bytes.data() + old, kChunk);
    if (n < 0) {
      int errnum = 0;
      // gzerror's text lives in the gzFile: copy it before gzclose frees it (a fuzzer finding,
      // docs/reliability.md).
      std::string what = gzerror(file, &errnum);
      gzclose(file);
      // zlib names a gzdopen'ed file "<fd:N>": name the user's path instead.
      if (what.rfind("<fd:", 0) == 0) {
        if (const auto end = what.find(">: "); end != std::string::npos) {
          what = path.string() + what.substr(end + 1);
        }
      }
      return Error{fmt::format("{}: corrupt compressed data ({}); {}", path.string(), what, fix)};
    }
    bytes.resize(old + static_cast<std::size_t>(n));
    if (n == 0) break;
  }
  // gzread stops silently at a truncated gzip stream; gzclose_r reports it.
  const int close_status = gzclose(file);
  if (close_status != Z_OK && close_status != Z_BUF_ERROR) {
    return Error{fmt::format("{}: corrupt compressed data; {}", path.string(), fix)};
  }
  if (close_status == Z_BUF_ERROR) {
    return Error{fmt::format("{}: truncated gzip stream; {}", path.string(), fix)};
  }
  return bytes;
}

}  // namespace stalesgd
