// Probes of .stalesgd.lock files (why: held_folder.hpp).
#include "output/held_folder.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

#include "output/folder_lock.hpp"

namespace stalesgd {
namespace fs = std::filesystem;

namespace {

// The pid a lock file records ("123\n"), or 0.
pid_t recorded_pid(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return 0;
  char* end = nullptr;
  const long pid = std::strtol(buf, &end, 10);
  return end != buf && pid > 0 ? static_cast<pid_t>(pid) : 0;
}

// The holder of `folder`'s lock file, if another open file holds it exclusively. A missing
// file, a symlink or a file that cannot be opened holds nothing (FolderLock refuses to lock
// through a symlink, so no live process holds one).
std::optional<HeldFolder> probe(const fs::path& folder) {
  const fs::path lock = folder / FolderLock::kFile;
  const int fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::optional<HeldFolder> held;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    // Shared: two probes never conflict, and a holder's exclusive lock refuses it. The probe
    // holds it for microseconds; FolderLock::acquire retries its own lock past that.
    int rc;
    do {
      rc = ::flock(fd, LOCK_SH | LOCK_NB);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0 && errno == EWOULDBLOCK) {
      const pid_t pid = recorded_pid(fd);
      held = HeldFolder{folder, lock,
                        pid > 0 ? "process " + std::to_string(pid) : "another process", pid};
    }
  }
  ::close(fd);  // releases the shared probe, if taken
  return held;
}

}  // namespace

fs::path folder_key(const fs::path& dir) {
  std::error_code ec;
  fs::path key = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  if (ec) key = fs::absolute(dir, ec).lexically_normal();
  // "a/b/" and "a/b" are one folder.
  if (!key.has_filename() && key.has_parent_path() && key != key.root_path()) {
    key = key.parent_path();
  }
  return key;
}

std::optional<HeldFolder> held_itself(const fs::path& dir) {
  return probe(folder_key(dir));
}

std::optional<HeldFolder> held_around(const fs::path& dir,
                                      const std::optional<OuterFolder>& outer) {
  const fs::path key = folder_key(dir);
  const fs::path skip = outer ? folder_key(outer->folder) : fs::path();
  for (fs::path p = key; p != p.root_path() && p.has_parent_path();) {
    p = p.parent_path();
    auto held = probe(p);
    if (held && outer && p == skip && held->pid == outer->pid) continue;
    if (held) return held;
  }
  return std::nullopt;
}

std::optional<HeldFolder> held_inside(const fs::path& dir) {
  const fs::path key = folder_key(dir);
  // A folder at a time, so that one that vanishes or cannot be read while the walk goes is
  // skipped alone (a folder this user cannot read holds no run this process could replace).
  std::vector<fs::path> folders{key};
  while (!folders.empty()) {
    const fs::path folder = std::move(folders.back());
    folders.pop_back();
    if (folder != key) {
      if (auto held = probe(folder)) return held;
    }
    std::error_code ec;
    for (fs::directory_iterator it(folder, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::directory_iterator(); it.increment(ec)) {
      std::error_code type_ec;
      if (it->is_directory(type_ec) && !it->is_symlink(type_ec)) folders.push_back(it->path());
    }
  }
  return std::nullopt;
}

}  // namespace stalesgd
