// What `stalesgd train --resume DIR` and stalesgd.train(resume=DIR) continue: the run's own
// options, read back from the flags its checkpoint recorded, and the options given beside
// --resume checked against them, so that a resumed run is the same run (docs/reliability.md,
// "Checkpoint and resume"; docs/python.md, "Resume"). The CLI (tools/cli/resume_command.cpp)
// and the Python package (src/python/train.cpp) call these in this order, the CLI taking the
// folder's lock before the second; run_into_folder then checks the run's identity itself.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "output/checkpoint.hpp"
#include "stalesgd/config/trainer_options.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

// A run to continue, as its checkpoint recorded it.
struct ResumedRun {
  TrainerOptions options;  // the run's, from the checkpoint's flags; out_dir and resume_dir DIR
  std::string payload;     // the checkpoint's payload
  CheckpointHeader header;
};

// Usage errors found before DIR is read: --force beside --resume, an --out naming another
// folder. `flags`: the flags given beside --resume, without "--" ("data-dir").
Status check_resume_flags(const std::filesystem::path& dir, const TrainerOptions& given,
                          const std::vector<std::string>& flags);

// "--resume DIR: no such folder; ..." unless DIR is a folder (checked before it is locked,
// which would create it).
Status check_resume_folder(const std::filesystem::path& dir);

// The run in DIR: refused when there is no folder, when it finished (summary.json says so and
// its stop reason is not `interrupted`: nothing to resume), or when its checkpoint is missing,
// damaged or records flags this build does not read.
Result<ResumedRun> read_resumed_run(const std::filesystem::path& dir);

// Every flag given beside --resume against the run's: each must agree with the checkpoint's,
// but for --resume, --out (check_resume_flags), --data-dir (the data may have moved: it is
// taken, and the checkpoint's data digest decides), --save-model, --no-progress and
// --progress-every. The run takes the given data dir, model file and progress options. An Error is
// a usage error naming the flag and the run's value.
Status apply_given_options(ResumedRun& run, const TrainerOptions& given,
                           const std::vector<std::string>& flags);

}  // namespace stalesgd
