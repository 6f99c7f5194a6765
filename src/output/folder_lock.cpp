// FolderLock: flock(2) on DIR/.stalesgd.lock for the life of the process, with no other
// process holding a folder around or inside DIR.
#include "output/folder_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "util/atomic_file.hpp"

namespace stalesgd {
namespace fs = std::filesystem;

namespace {

constexpr const char* kWait = "wait for it to end, or pass another --out";

Error in_use(const fs::path& dir, const HeldFolder& held) {
  return Error{fmt::format("--out {} is in use by {} (its lock is {}); {}", dir.string(),
                           held.holder, held.lock.string(), kWait)};
}

// A folder around or inside `dir` that another process holds, as the refusal.
std::optional<Error> held_near(const fs::path& dir, const std::optional<OuterFolder>& outer) {
  if (auto held = held_around(dir, outer)) {
    return Error{fmt::format("--out {} is inside {}, which is in use by {} (its lock is {}); {}",
                             dir.string(), held->folder.string(), held->holder, held->lock.string(),
                             kWait)};
  }
  if (auto held = held_inside(dir)) {
    return Error{fmt::format("--out {} holds {}, which is in use by {} (its lock is {}); {}",
                             dir.string(), held->folder.string(), held->holder, held->lock.string(),
                             kWait)};
  }
  return std::nullopt;
}

// flock(LOCK_EX | LOCK_NB), tried again for up to 20 ms while EWOULDBLOCK: another process's
// probe (held_folder.cpp) holds the file shared for microseconds, and must not pass for an
// owner. A real owner still refuses every try. Returns 0 or the errno.
int lock_exclusive(int fd) {
  for (int attempt = 0;; ++attempt) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return 0;
    const int err = errno;
    if (err == EINTR) continue;
    if (err != EWOULDBLOCK || attempt == 20) return err;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

Result<FolderLock> FolderLock::acquire(const fs::path& dir,
                                       const std::optional<OuterFolder>& outer) {
  // First without touching anything, so that a refusal creates no folder and no lock file.
  if (auto s = check(dir, outer); !s) return s.error();
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
  if (const int err = lock_exclusive(fd); err != 0) {
    if (err != EWOULDBLOCK) return file_error("cannot lock", path, err);
    if (auto held = held_itself(dir)) return in_use(dir, *held);
    return in_use(dir, HeldFolder{dir, path, "another process", 0});
  }
  // Ours: record our pid for the next process that is refused (a courtesy; the lock is flock).
  // Written over the old one, then cut to its length, so that a reader never finds it empty.
  const std::string pid = fmt::format("{}\n", ::getpid());
  if (::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size()) ||
      ::ftruncate(fd, static_cast<off_t>(pid.size())) != 0) {
    return file_error("cannot write", path, errno);
  }
  // Again, now that the folder is ours: one locked around or inside it since the first look
  // (it looked before we locked, so of the two of us, we are the one to see the other). Then
  // the folder is not ours after all, and the file names no one.
  if (auto refused = held_near(dir, outer)) {
    (void)::ftruncate(fd, 0);  // best effort: the pid is a courtesy, the lock goes with fd
    return *refused;
  }
  return lock;
}

Status FolderLock::check(const fs::path& dir, const std::optional<OuterFolder>& outer) {
  if (auto held = held_itself(dir)) return in_use(dir, *held);
  if (auto refused = held_near(dir, outer)) return *refused;
  return {};
}

std::optional<OuterFolder> FolderLock::outer_from_environment() {
  const char* value = std::getenv(kOuterVariable);
  if (value == nullptr) return std::nullopt;
  const std::string text(value);
  const auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) return std::nullopt;
  char* end = nullptr;
  const long pid = std::strtol(text.c_str(), &end, 10);
  if (end != text.c_str() + colon || pid <= 0) return std::nullopt;
  return OuterFolder{fs::path(text.substr(colon + 1)), static_cast<pid_t>(pid)};
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
