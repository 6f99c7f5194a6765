// train() with the library's own plumbing: the journal a run into a folder appends to, the
// checkpoint it resumes from, and the log it writes (experiment/run_folder.cpp, the CLI and the
// race use it; a program using the library calls run_into_folder or the public train()).
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include <spdlog/logger.h>

#include "output/run_journal.hpp"
#include "stalesgd/engine/progress.hpp"
#include "stalesgd/engine/trainer.hpp"
#include "stalesgd/model/model.hpp"
#include "util/logging.hpp"

namespace stalesgd {

// What a run shares with its caller besides its configuration and data.
struct TrainIo {
  const std::atomic<bool>* interrupt = nullptr;  // set (e.g. by a signal handler): stop cleanly
  RunJournal* journal = nullptr;  // --out: rows appended as the run goes (docs/outputs.md)
  // --resume: a checkpoint's payload (docs/reliability.md); the run continues from it, and
  // `journal` must have been opened to continue at the checkpoint's offsets.
  const std::string* resume = nullptr;
  ProgressSink* progress = nullptr;  // how far the run is, ten times a second at most; may be null
  spdlog::logger* log = nullptr;     // where the run logs (failed workers, checkpoints,
                                     // snapshots); null: spdlog's default logger
  // The run's model, already built and checked by the caller (the CLI, which ends the process on
  // a signal while it loads: cli/startup_guard.hpp); train() takes it. Null: train() builds it.
  std::unique_ptr<Model>* model = nullptr;
  // --out: run.log, whose failed write ends the run as a failed journal write does; may be null.
  const logging::RunLog* run_log = nullptr;
};

// As the public train(), and a write to `io.journal` or `io.run_log` that fails ends the run
// with StopReason::kFailed and RunRecord::output_failed.
Result<RunRecord> train(const ResolvedRun& run, const Dataset& data, const TrainIo& io);

}  // namespace stalesgd
