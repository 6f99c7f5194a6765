// Writes a file whole or not at all (docs/outputs.md): a crash or a full disk leaves the old
// file or none, never a cut one.
#pragma once

#include <filesystem>
#include <string_view>

#include "stalesgd/util/result.hpp"

namespace stalesgd {

// Writes `contents` to a temporary file beside `path` (same folder, so the rename cannot cross
// file systems), flushes and fsyncs it, closes it and renames it over `path`, then fsyncs the
// folder. Every step's result is checked: the error names the file and the system's reason
// ("cannot write runs/x/results.csv.tmp.123 (No space left on device)"), and the temporary
// file is removed, so `path` keeps its old contents.
// The temporary file is unnamed until it is synced (O_TMPFILE, linked in with linkat) where the
// file system has them, so a process killed mid-write leaves no file; elsewhere it is
// PATH.tmp.PID from the start.
Status write_file_atomically(const std::filesystem::path& path, std::string_view contents);

// Removes the temporary files a killed process left in `folder` (NAME.tmp.PID, regular files
// whose PID is no live process); those of live processes stay. Run folders call it when a run
// starts or resumes, under the folder's lock (docs/reliability.md).
Status remove_stale_temporaries(const std::filesystem::path& folder);

// fsync of a folder, so that the entries created or renamed in it last; a file system that
// cannot sync a folder (EINVAL) is taken as done.
Status sync_folder(const std::filesystem::path& folder);

// "cannot write PATH (No space left on device)" for the errno of a failed call.
Error file_error(const char* what, const std::filesystem::path& file, int errnum);

}  // namespace stalesgd
