// FolderLock: one process owns a run or race folder for its whole life, and no other process
// owns a folder around it or inside it (docs/reliability.md). A second `train`, `train --force`,
// `train --resume` or `race` on the same --out, on a folder inside one in use (a race's run
// folder) or on one that holds a folder in use (a race --force over a live train's --out) is
// refused in one line naming the holder's pid and the folder it holds, before any file changes.
//
// The lock is flock(2) on DIR/.stalesgd.lock, taken without waiting: the kernel releases it when
// the process ends, however it ends (kill -9 included), so a stale lock file never blocks the
// next run. The file itself stays (it holds the last owner's pid and is not part of the run).
// The folders around and inside are probed (output/held_folder.hpp) before the folder is
// created or locked, and again once it is locked: of two processes that lock a folder and one
// inside it at the same moment, the later to lock sees the other.
//
// Thread safety: a value; acquire it once per process and folder, before the folder is read.
#pragma once

#include <filesystem>
#include <optional>

#include "output/held_folder.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

class FolderLock {
 public:
  static constexpr const char* kFile = ".stalesgd.lock";
  // "PID:FOLDER", set by a race for the mpirun job of one of its runs: the race's folder,
  // which that pid holds, is no conflict for the job's rank 0 (experiment/mpi_launch.cpp).
  static constexpr const char* kOuterVariable = "STALESGD_OUTER_LOCK";

  // Creates `dir` if needed, then locks it. `outer`: a folder around `dir` that is no conflict
  // (the race's own --out while it runs one of its runs). Errors, each naming the holder:
  //   "--out DIR is in use by process PID (its lock is DIR/.stalesgd.lock); ..."
  //   "--out DIR is inside FOLDER, which is in use by process PID (its lock is ...); ..."
  //   "--out DIR holds FOLDER, which is in use by process PID (its lock is ...); ..."
  // or the OS error of a folder that cannot be created or a lock file that cannot be opened.
  static Result<FolderLock> acquire(const std::filesystem::path& dir,
                                    const std::optional<OuterFolder>& outer = std::nullopt);

  // acquire's refusals without taking anything (no folder created, no file opened for
  // writing): a command that reads or checks much before it locks refuses a folder in use first.
  static Status check(const std::filesystem::path& dir,
                      const std::optional<OuterFolder>& outer = std::nullopt);

  // The outer folder kOuterVariable names, if set and well formed.
  static std::optional<OuterFolder> outer_from_environment();

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
