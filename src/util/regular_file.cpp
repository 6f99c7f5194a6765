// open_regular_file: O_NONBLOCK open, fstat, and a refusal naming what the path is instead.
#include "util/regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace stalesgd {
namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

std::string ending(std::string_view fix) {
  return fix.empty() ? std::string() : fmt::format("; {}", fix);
}

}  // namespace

RegularFile::RegularFile(RegularFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), size_(other.size_) {}

RegularFile& RegularFile::operator=(RegularFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
  }
  return *this;
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

int RegularFile::release() {
  return std::exchange(fd_, -1);
}

Result<RegularFile> open_regular_file(const std::filesystem::path& path, std::string_view what,
                                      std::string_view fix) {
  const std::string name = what.empty() ? path.string() : std::string(what);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int errnum = errno;
    if (errnum == ENOENT) return Error{fmt::format("{}: file not found{}", name, ending(fix))};
    if (errnum == EACCES || errnum == EPERM) {
      return Error{fmt::format("{}: permission denied; let this user read the file and search its "
                               "folders (see ls -l)",
                               name)};
    }
    return Error{
        fmt::format("{}: cannot open it ({}){}", name, std::strerror(errnum), ending(fix))};
  }
  return keep_if_regular(fd, name, fix);
}

Result<RegularFile> keep_if_regular(int fd, std::string_view name, std::string_view fix) {
  RegularFile file(fd, 0);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return Error{
        fmt::format("{}: cannot read it ({}){}", name, std::strerror(errno), ending(fix))};
  }
  if (!S_ISREG(st.st_mode)) {
    return Error{fmt::format("{}: not a regular file ({}){}", name, kind_of(st.st_mode),
                             ending(fix))};
  }
  // Reads of a regular file never block; clearing the flag keeps later readers' assumptions.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return RegularFile(file.release(), static_cast<std::uint64_t>(st.st_size));
}

Result<std::string> read_regular_file(const std::filesystem::path& path, std::string_view what,
                                      std::string_view fix, std::uint64_t max_bytes) {
  auto file = open_regular_file(path, what, fix);
  if (!file) return file.error();
  const std::string name = what.empty() ? path.string() : std::string(what);
  if (file->size() > max_bytes) {
    return Error{fmt::format("{}: {} bytes, more than the {} such a file can hold{}", name,
                             file->size(), max_bytes, ending(fix))};
  }
  std::string bytes(static_cast<std::size_t>(file->size()), '\0');
  std::size_t at = 0;
  for (;;) {
    // A file that grows while read is read to max_bytes; one that shrinks ends where it ends.
    if (at == bytes.size()) {
      if (bytes.size() >= max_bytes) break;
      bytes.resize(std::min<std::uint64_t>(max_bytes, bytes.size() + (1u << 16)));
    }
    const ssize_t n = ::read(file->fd(), bytes.data() + at, bytes.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return Error{
          fmt::format("{}: cannot read it ({}){}", name, std::strerror(errno), ending(fix))};
    }
    if (n == 0) break;
    at += static_cast<std::size_t>(n);
  }
  bytes.resize(at);
  return bytes;
}

}  // namespace stalesgd
