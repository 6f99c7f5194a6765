// FolderLock: flock(2) on DIR/.stalesgd.lock for the life of the process.
#include "output/folder_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include <fmt/format.h>

#include "util/atomic_file.hpp"

namespace stalesgd {
namespace fs = std::filesystem;

Result<FolderLock> FolderLock::acquire(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return Error{fmt::format("cannot create --out {}: {}; pass a writable folder", dir.string(),
                             ec.message())};
  }
  const fs::path path = dir / kFile;
  // O_NOFOLLOW and no O_TRUNC before the lock is ours: a symlink planted here is refused, and
  // the owner's pid is still readable by the process that is refused.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return file_error("cannot open the lock file", path, errno);
  FolderLock lock(fd);
  int rc;
  do {
    rc = ::flock(fd, LOCK_EX | LOCK_NB);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const int err = errno;
    if (err != EWOULDBLOCK) return file_error("cannot lock", path, err);
    char buf[32] = {};
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    std::string pid = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    return Error{fmt::format(
        "--out {} is in use by {} (its lock is {}); wait for it to end, or pass another --out",
        dir.string(), pid.empty() ? std::string("another process") : "process " + pid,
        path.string())};
  }
  // Ours: record our pid for the next process that is refused (a courtesy; the lock is flock).
  const std::string pid = fmt::format("{}\n", ::getpid());
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    return file_error("cannot write", path, errno);
  }
  return lock;
}

FolderLock& FolderLock::operator=(FolderLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

}  // namespace stalesgd
