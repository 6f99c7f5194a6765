// RunJournal: a run's output folder while the run goes (docs/outputs.md, docs/reliability.md).
// updates.csv, gradients.csv and evals.csv are appended as rows arrive and flushed to the OS at
// least twice a second, so a user can `tail -f` them and a crash (even kill -9) cuts them at a
// row boundary the last flush reached, never mid-file garbage that passes for data. The end of a
// run is marked by summary.json, written last through a temporary file, fsync and rename: a
// folder without it holds an unfinished run. Every write, flush, sync and close is checked;
// the first failure is kept and reported with the path and the OS error.
//
// Thread safety: not thread-safe; one thread (the run supervisor's) appends.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "stalesgd/metrics/records.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

// How far each journal file was written: rows and bytes (a checkpoint records them, and a
// resumed run cuts the files back to them).
struct JournalOffsets {
  std::uint64_t update_rows = 0, update_bytes = 0;
  std::uint64_t gradient_rows = 0, gradient_bytes = 0;
  std::uint64_t eval_rows = 0, eval_bytes = 0;
  // CRC-32 of each file's first *_bytes bytes: a resumed run refuses a file changed behind it.
  std::uint32_t update_crc = 0, gradient_crc = 0, eval_crc = 0;
};

class RunJournal {
 public:
  // What to do with a folder that already holds files.
  enum class Existing {
    kRefuse,     // an error naming the folder and the flags that allow it (--force, --resume)
    kOverwrite,  // --force: the old run's files are removed first
    kContinue,   // --resume: the journal files are cut back to `offsets` and appended to
  };

  // Creates `dir` if needed and opens the three journal files (headers written). This is where
  // an --out that cannot be written is found, before any training.
  static Result<std::unique_ptr<RunJournal>> open(const std::filesystem::path& dir,
                                                  Existing existing,
                                                  const JournalOffsets& offsets = {});
  ~RunJournal();
  RunJournal(const RunJournal&) = delete;
  RunJournal& operator=(const RunJournal&) = delete;

  const std::filesystem::path& dir() const { return dir_; }

  // Append rows (each call continues where the previous one stopped); flush to the OS when
  // half a second has passed since the last flush. The first error is returned from then on.
  Status append(std::span<const UpdateRecord> rows);
  Status append(std::span<const GradientRecord> rows);
  Status append(std::span<const EvalRecord> rows);
  // Flushes now (before a checkpoint, which records the offsets).
  Status flush();
  const JournalOffsets& offsets() const { return offsets_; }

  // Flushes, fsyncs and closes the journal files (the summary is written after this).
  Status close();
  // Removes the room the folder held back while the run went (DIR/.stalesgd.reserve, 1 MiB),
  // so that workers.csv and summary.json can be written on a disk the run filled; also done by
  // the destructor.
  void release_reserve();

 private:
  // One journal file: rows collect in `pending` and go to the OS whole, so after a failed or
  // short write the file is cut back to `flushed` bytes, a row boundary.
  struct File {
    std::filesystem::path path;
    int fd = -1;
    std::string pending;
    std::uint64_t flushed = 0;  // bytes in the file, all of them whole rows
  };
  explicit RunJournal(std::filesystem::path dir) : dir_(std::move(dir)) {}
  Status write(File& file, std::string_view text, std::uint64_t& bytes, std::uint32_t& crc);
  Status flush(File& file);
  Status maybe_flush();
  // Creates DIR/.stalesgd.reserve with its blocks allocated; open() fails if it cannot.
  Status hold_reserve();

  std::filesystem::path dir_;
  File updates_, gradients_, evals_;
  JournalOffsets offsets_;
  Status error_;  // the first failure, sticky
  std::int64_t last_flush_ns_ = 0;
  bool reserved_ = false;  // DIR/.stalesgd.reserve is ours to remove
};

}  // namespace stalesgd
