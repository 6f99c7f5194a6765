// write_file_atomically: temporary file, fsync, rename (LevelDB's way of writing); the
// temporaries a killed process left.
#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <fmt/format.h>

namespace stalesgd {

namespace fs = std::filesystem;

Error file_error(const char* what, const fs::path& file, int errnum) {
  return Error{fmt::format("{} {} ({})", what, file.string(), std::strerror(errnum))};
}

// The rename is durable once the folder's entry is: fsync the folder too. Some file systems
// cannot sync a folder (EINVAL); the file itself is synced by then.
Status sync_folder(const fs::path& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return file_error("cannot open folder", folder, errno);
  const int synced = ::fsync(fd);
  const int errnum = errno;
  ::close(fd);
  if (synced != 0 && errnum != EINVAL) return file_error("cannot sync folder", folder, errnum);
  return {};
}

namespace {

// What a temporary file beside `path` is named: the pid keeps two processes writing the same
// path from sharing one, and says whose it is (remove_stale_temporaries).
fs::path temporary_name(const fs::path& path) {
  return fs::path(path).concat(fmt::format(".tmp.{}", ::getpid()));
}

// write(2) until every byte is written; false with errno set.
bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// An unnamed file in `folder` (O_TMPFILE), so that a process killed while writing leaves
// nothing behind; -1 with errno EOPNOTSUPP where the file system or kernel has none.
int open_unnamed(const fs::path& folder) {
  const int fd = ::open(folder.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  if (fd < 0 && (errno == EISDIR || errno == EINVAL)) errno = EOPNOTSUPP;  // kernels before 3.11
  return fd;
}

}  // namespace

Status write_file_atomically(const fs::path& path, std::string_view contents) {
  const fs::path tmp = temporary_name(path);
  const fs::path folder = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  // The bytes go to an unnamed file where the file system has them, linked in as `tmp` only once
  // they are synced: a kill -9 mid-write leaves no file. Elsewhere to `tmp` itself, which a
  // later run's remove_stale_temporaries removes.
  int fd = open_unnamed(folder);
  const bool unnamed = fd >= 0;
  if (!unnamed && errno == EOPNOTSUPP) {
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  }
  if (fd < 0) return file_error("cannot create", tmp, errno);
  bool named = !unnamed;
  auto fail = [&](const char* what, int errnum) -> Status {
    if (fd >= 0) ::close(fd);
    if (named) std::remove(tmp.c_str());
    return file_error(what, tmp, errnum);
  };
  if (!write_all(fd, contents)) return fail("cannot write", errno);
  if (::fsync(fd) != 0) return fail("cannot sync", errno);
  if (unnamed) {
    // A name for the synced file: linkat through /proc (AT_EMPTY_PATH would need a capability).
    std::remove(tmp.c_str());  // a file of a dead process that had our pid
    const std::string self = fmt::format("/proc/self/fd/{}", fd);
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, tmp.c_str(), AT_SYMLINK_FOLLOW) != 0) {
      return fail("cannot create", errno);
    }
    named = true;
  }
  const int closed = ::close(fd);
  fd = -1;
  if (closed != 0) return fail("cannot close", errno);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int errnum = errno;
    std::remove(tmp.c_str());
    return Error{fmt::format("cannot rename {} to {} ({})", tmp.string(), path.string(),
                             std::strerror(errnum))};
  }
  return sync_folder(folder);
}

Status remove_stale_temporaries(const fs::path& folder) {
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const auto at = name.rfind(".tmp.");
    if (at == std::string::npos || at == 0) continue;
    const std::string digits = name.substr(at + 5);
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    // kill(pid, 0) fails with ESRCH only when no such process lives (EPERM: it lives).
    const auto pid = static_cast<pid_t>(std::stol(digits));
    if (pid <= 0 || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    if (!it->is_regular_file(ec) || ec) continue;  // not a file this code writes
    if (std::remove(it->path().c_str()) != 0 && errno != ENOENT) {
      return file_error("cannot remove", it->path(), errno);
    }
  }
  if (ec) return file_error("cannot read folder", folder, ec.value());
  return {};
}

}  // namespace stalesgd
