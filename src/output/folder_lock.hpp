// FolderLock: one process owns a run or race folder for its whole life (docs/reliability.md).
// A second `train`, `train --resume` or `race` on the same --out is refused in one line naming
// the owner's pid, instead of two processes interleaving rows in one journal.
//
// The lock is flock(2) on DIR/.stalesgd.lock, taken without waiting: the kernel releases it when
// the process ends, however it ends (kill -9 included), so a stale lock file never blocks the
// next run. The file itself stays (it holds the last owner's pid and is not part of the run).
//
// Thread safety: a value; acquire it once per process and folder, before the folder is read.
#pragma once

#include <filesystem>

#include "stalesgd/util/result.hpp"

namespace stalesgd {

class FolderLock {
 public:
  static constexpr const char* kFile = ".stalesgd.lock";

  // Creates `dir` if needed, then locks it. Errors: "--out DIR is in use by process PID (its
  // lock is DIR/.stalesgd.lock); wait for it to end, or pass another --out", or the OS error of
  // a folder that cannot be created or a lock file that cannot be opened.
  static Result<FolderLock> acquire(const std::filesystem::path& dir);

  FolderLock() = default;
  FolderLock(FolderLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FolderLock& operator=(FolderLock&& other) noexcept;
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;
  ~FolderLock();

  bool held() const { return fd_ >= 0; }

 private:
  explicit FolderLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace stalesgd
