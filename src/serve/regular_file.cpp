// Opening only regular files, without ever blocking on a FIFO or a device.
#include "serve/regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace stalesgd::serve {
namespace fs = std::filesystem;

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a folder";
  return "not a plain file";
}

}  // namespace

RegularFile RegularFile::open(const fs::path& path) {
  RegularFile f;
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, for good.
  // O_NOCTTY: a terminal named like a journal must not become ours.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) return f;
    f.state_ = FileState::kRefused;
    // ENXIO: a socket file, or a FIFO on some systems; both are not files to read.
    f.why_ = fmt::format("{} cannot be opened ({}): serve reads only regular files it may read",
                         path.string(), std::strerror(err));
    return f;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    f.state_ = FileState::kRefused;
    f.why_ = fmt::format("{} cannot be examined ({})", path.string(), std::strerror(err));
    return f;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    f.state_ = FileState::kRefused;
    f.why_ = fmt::format("{} is {}, not a regular file: serve reads only regular files",
                         path.string(), kind_of(st.st_mode));
    return f;
  }
  f.fd_ = fd;
  f.state_ = FileState::kOpen;
  f.size_ = static_cast<std::uint64_t>(st.st_size);
  f.inode_ = static_cast<std::uint64_t>(st.st_ino);
  return f;
}

RegularFile::RegularFile(RegularFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      state_(std::exchange(other.state_, FileState::kMissing)),
      why_(std::move(other.why_)),
      size_(other.size_),
      inode_(other.inode_) {}

RegularFile& RegularFile::operator=(RegularFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    state_ = std::exchange(other.state_, FileState::kMissing);
    why_ = std::move(other.why_);
    size_ = other.size_;
    inode_ = other.inode_;
  }
  return *this;
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::int64_t RegularFile::read_at(std::uint64_t offset, char* buffer, std::size_t n) const {
  if (fd_ < 0) return -1;
  std::size_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd_, buffer + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return -1;
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  return static_cast<std::int64_t>(done);
}

FileBytes read_regular_file(const fs::path& path, std::size_t max_bytes, bool whole) {
  FileBytes out;
  const RegularFile file = RegularFile::open(path);
  out.state = file.state();
  if (!file.is_open()) {
    out.why = file.why();
    return out;
  }
  // One byte more than allowed tells a file that is too long from one that just fits.
  const std::size_t want = whole ? max_bytes + 1 : max_bytes;
  out.bytes.resize(static_cast<std::size_t>(std::min<std::uint64_t>(file.size() + 1, want)));
  std::size_t have = 0;
  while (have < want) {
    if (have == out.bytes.size()) out.bytes.resize(std::min(want, 2 * have + 4096));
    const auto got = file.read_at(have, out.bytes.data() + have, out.bytes.size() - have);
    if (got < 0) {
      out = {
          FileState::kRefused, {}, fmt::format("{} cannot be read (an I/O error)", path.string())};
      return out;
    }
    if (got == 0) break;
    have += static_cast<std::size_t>(got);
  }
  if (whole && have > max_bytes) {
    out = {
        FileState::kRefused,
        {},
        fmt::format("{} is over {} bytes: too large for serve to read", path.string(), max_bytes)};
    return out;
  }
  out.bytes.resize(have);
  return out;
}

}  // namespace stalesgd::serve
