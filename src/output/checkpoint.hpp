// checkpoint.bin: everything a run needs to continue (docs/reliability.md). The file is a magic
// line, a format number, the payload's length, the payload and its CRC-32; it is written through
// a temporary file, fsync and rename, so a crash leaves the previous checkpoint or the new one,
// never a torn one. The payload starts with the part every engine shares (CheckpointHeader:
// the run's flags, the clock, how far each journal file was written, the evaluations so far,
// the records) and goes on with the engine's own state.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "output/run_journal.hpp"
#include "stalesgd/config/trainer_options.hpp"
#include "stalesgd/data/dataset.hpp"
#include "stalesgd/metrics/records.hpp"
#include "stalesgd/util/result.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {

inline constexpr const char* kCheckpointFile = "checkpoint.bin";

struct CheckpointHeader {
  std::vector<std::string> args;  // the run's flags (options_to_args), without --out
  std::string engine;             // which engine wrote it ("virtual", "thread", ...)
  // The run's identity (docs/reliability.md): --resume refuses a folder, options or data that
  // do not match it.
  std::string run_id;           // drawn when the run started; the same through every resume
  std::string options_digest;   // of the resolved options (options_digest())
  std::string data_digest;      // of the data set's files as read (Dataset::digest)
  double t = 0.0;               // the run's clock at the checkpoint, seconds
  JournalOffsets offsets;       // the journal files hold exactly the rows below
  std::uint64_t snapshots = 0;  // snapshots taken
  std::uint64_t evals_skipped = 0;
  RunRecord rows;  // updates, gradients and evals so far
};

void save_header(StateWriter& out, const CheckpointHeader& header);
// A header that does not parse leaves `in` bad (in.error() says where).
CheckpointHeader load_header(StateReader& in);

// Whether an options_to_json key leaves what a run computes unchanged: where its data lies,
// how often it checkpoints, what it shows while it goes. Not in the digest below, and not
// compared by race --resume.
bool outside_the_run(std::string_view key);

// The digest of the options that decide what a run computes: not where it writes, where its
// data lies, how often it checkpoints or what it shows while it goes.
std::string options_digest(const TrainerOptions& options);

// Whether `header` belongs to the run that `options` on `data` is: the same options as this
// build reads them, the same data files, a clock within the --time budget. Checked by --resume
// before the run's folder is touched; the Error names what differs and the fix.
Status check_identity(const CheckpointHeader& header, const TrainerOptions& options,
                      const Dataset& data);

// Wraps `payload` (magic, format, length, CRC) and writes DIR/checkpoint.bin atomically.
Status write_checkpoint(const std::filesystem::path& dir, const std::string& payload);
// The payload of DIR/checkpoint.bin, checked; an Error names the file and what is wrong.
Result<std::string> read_checkpoint(const std::filesystem::path& dir);
// The same check on a file's bytes (`name` for the messages).
Result<std::string> unwrap_checkpoint(std::string_view bytes, const std::string& name);

}  // namespace stalesgd
