// write_file_atomically: temporary file, fflush + fsync, rename (LevelDB's way of writing).
#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

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

Status write_file_atomically(const fs::path& path, std::string_view contents) {
  // The pid keeps two processes writing the same path from sharing a temporary file.
  const fs::path tmp = fs::path(path).concat(fmt::format(".tmp.{}", ::getpid()));
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) return file_error("cannot create", tmp, errno);
  auto fail = [&](const char* what, int errnum) -> Status {
    if (f != nullptr) std::fclose(f);
    std::remove(tmp.c_str());
    return file_error(what, tmp, errnum);
  };
  if (std::fwrite(contents.data(), 1, contents.size(), f) != contents.size()) {
    return fail("cannot write", errno);
  }
  if (std::fflush(f) != 0) return fail("cannot write", errno);
  if (::fsync(::fileno(f)) != 0) return fail("cannot sync", errno);
  const int closed = std::fclose(f);
  f = nullptr;
  if (closed != 0) return fail("cannot close", errno);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int errnum = errno;
    std::remove(tmp.c_str());
    return Error{fmt::format("cannot rename {} to {} ({})", tmp.string(), path.string(),
                             std::strerror(errnum))};
  }
  const fs::path folder = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  return sync_folder(folder);
}

}  // namespace stalesgd
