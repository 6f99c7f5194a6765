// MemFile on Linux's memfd_create (see mem_file.hpp).
#include "support/mem_file.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace stalesgd::fuzz {

MemFile::MemFile() : fd_(memfd_create("stalesgd-fuzz", MFD_CLOEXEC)) {
  if (fd_ < 0) {
    std::perror("MemFile: memfd_create");
    std::abort();
  }
  path_ = "/proc/self/fd/" + std::to_string(fd_);
}

MemFile::~MemFile() {
  close(fd_);
}

const std::filesystem::path& MemFile::write(std::span<const std::uint8_t> bytes) {
  // Every reader opens the path afresh, so offsets do not matter; only the size must shrink.
  if (ftruncate(fd_, 0) != 0) {
    std::perror("MemFile: ftruncate");
    std::abort();
  }
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n =
        pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n <= 0) {
      std::perror("MemFile: pwrite");
      std::abort();
    }
    done += static_cast<std::size_t>(n);
  }
  return path_;
}

}  // namespace stalesgd::fuzz
