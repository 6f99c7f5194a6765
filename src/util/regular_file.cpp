// Opening only regular files, without ever blocking on a FIFO or a device (util/regular_file.hpp).
#include "util/regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace stalesgd {
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

std::string ending(std::string_view fix) {
  return fix.empty() ? std::string() : fmt::format("; {}", fix);
}

}  // namespace

RegularFile RegularFile::open(const fs::path& path) {
  RegularFile f;
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, for good.
  // O_NOCTTY: a terminal named like a file must not become ours.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    f.errno_ = err;
    if (err == ENOENT || err == ENOTDIR) return f;
    f.state_ = FileState::kRefused;
    // ENXIO: a socket file, or a FIFO on some systems; both are not files to read.
    f.why_ = fmt::format("{} cannot be opened ({})", path.string(), std::strerror(err));
    return f;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    f.errno_ = errno;
    ::close(fd);
    f.state_ = FileState::kRefused;
    f.why_ = fmt::format("{} cannot be examined ({})", path.string(), std::strerror(f.errno_));
    return f;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    f.state_ = FileState::kRefused;
    f.kind_ = kind_of(st.st_mode);
    f.why_ = fmt::format("{} is {}, not a regular file", path.string(), f.kind_);
    return f;
  }
  // Reads of a regular file never block; clearing the flag keeps readers' assumptions (zlib).
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
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
      kind_(std::move(other.kind_)),
      errno_(other.errno_),
      size_(other.size_),
      inode_(other.inode_) {}

RegularFile& RegularFile::operator=(RegularFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    state_ = std::exchange(other.state_, FileState::kMissing);
    why_ = std::move(other.why_);
    kind_ = std::move(other.kind_);
    errno_ = other.errno_;
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

namespace {

// At most `max_bytes` of an open file (read_regular_file's terms).
FileBytes read_open(const RegularFile& file, const fs::path& path, std::size_t max_bytes,
                    bool whole) {
  FileBytes out;
  out.state = FileState::kOpen;
  // One byte more than allowed tells a file that is too long from one that just fits.
  const std::size_t want = whole ? max_bytes + 1 : max_bytes;
  out.bytes.resize(static_cast<std::size_t>(std::min<std::uint64_t>(file.size() + 1, want)));
  std::size_t have = 0;
  while (have < want) {
    if (have == out.bytes.size()) out.bytes.resize(std::min(want, 2 * have + 4096));
    const auto got = file.read_at(have, out.bytes.data() + have, out.bytes.size() - have);
    if (got < 0) {
      out = {FileState::kRefused,
             {},
             fmt::format("{} cannot be read ({})", path.string(), std::strerror(errno))};
      return out;
    }
    if (got == 0) break;
    have += static_cast<std::size_t>(got);
  }
  if (whole && have > max_bytes) {
    out = {FileState::kRefused, {}, fmt::format("{} is over {} bytes", path.string(), max_bytes)};
    return out;
  }
  out.bytes.resize(have);
  return out;
}

}  // namespace

FileBytes read_regular_file(const fs::path& path, std::size_t max_bytes, bool whole) {
  const RegularFile file = RegularFile::open(path);
  if (!file.is_open()) return FileBytes{file.state(), {}, file.why()};
  return read_open(file, path, max_bytes, whole);
}

Result<RegularFile> open_user_file(const fs::path& path, std::string_view what,
                                   std::string_view fix) {
  const std::string name = what.empty() ? path.string() : std::string(what);
  RegularFile file = RegularFile::open(path);
  switch (file.state()) {
    case FileState::kOpen:
      return file;
    case FileState::kMissing:
      return Error{fmt::format("{}: file not found{}", name, ending(fix))};
    case FileState::kRefused:
      break;
  }
  if (!file.kind().empty()) {
    return Error{fmt::format("{}: not a regular file ({}){}", name, file.kind(), ending(fix))};
  }
  if (file.error_number() == EACCES || file.error_number() == EPERM) {
    return Error{fmt::format(
        "{}: permission denied; let this user read the file and search its folders (see ls -l)",
        name)};
  }
  return Error{fmt::format("{}: cannot open it ({}){}", name, std::strerror(file.error_number()),
                           ending(fix))};
}

Result<std::string> read_user_file(const fs::path& path, std::string_view what,
                                   std::string_view fix, std::uint64_t max_bytes) {
  auto file = open_user_file(path, what, fix);
  if (!file) return file.error();
  const std::string name = what.empty() ? path.string() : std::string(what);
  if (file->size() > max_bytes) {
    return Error{fmt::format("{}: {} bytes, more than the {} such a file can hold{}", name,
                             file->size(), max_bytes, ending(fix))};
  }
  const FileBytes bytes = read_open(*file, path, static_cast<std::size_t>(max_bytes), true);
  if (bytes.state != FileState::kOpen) return Error{fmt::format("{}{}", bytes.why, ending(fix))};
  return bytes.bytes;
}

}  // namespace stalesgd
