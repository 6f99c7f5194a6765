// Who holds a folder near a run's --out: the folder itself, one around it or one inside it
// (docs/reliability.md, "two processes on one folder"). Found by probing the folders'
// .stalesgd.lock files (output/folder_lock.hpp) with a shared, non-blocking flock(2) that is
// released at once, so the answer is the kernel's, whatever pid a stale lock file still says.
//
// Thread safety: free functions; safe from any thread (each probe opens its own descriptor).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>

namespace stalesgd {

// A folder whose lock another open file holds.
struct HeldFolder {
  std::filesystem::path folder;  // absolute, without symlinks
  std::filesystem::path lock;    // its .stalesgd.lock
  std::string holder;            // "process 123", from the lock file; "another process" if empty
  pid_t pid = 0;                 // what the lock file says; 0 if nothing
};

// An ancestor that is no conflict: the race folder this process holds while it runs one of its
// runs, or the one the race that launched this mpirun job holds (the pid its lock file says).
struct OuterFolder {
  std::filesystem::path folder;
  pid_t pid = 0;
};

// `dir` absolute and without symlinks, as far as it exists (the rest appended as given).
std::filesystem::path folder_key(const std::filesystem::path& dir);

// `dir`'s own lock, when held.
std::optional<HeldFolder> held_itself(const std::filesystem::path& dir);

// The nearest folder around `dir` whose lock is held, but `outer`.
std::optional<HeldFolder> held_around(const std::filesystem::path& dir,
                                      const std::optional<OuterFolder>& outer);

// A folder anywhere under `dir` (not `dir` itself; symlinks not followed) whose lock is held.
std::optional<HeldFolder> held_inside(const std::filesystem::path& dir);

}  // namespace stalesgd
