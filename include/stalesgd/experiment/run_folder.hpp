// run_into_folder: one run into a folder, as `stalesgd train --out DIR` writes it -- the journal
// of updates, gradients and evaluations appended while it runs, run.log, checkpoints, the
// runtime theory's prediction and summary.json last (docs/outputs.md) -- and continued from
// its checkpoint when asked (docs/reliability.md). The CLI's train and every run of a race go
// through the same steps.
//
// Thread safety: as train(); runs side by side need folders of their own (a second process or
// call on a folder in use is refused: the folder is locked while the run goes).
#pragma once

#include <atomic>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "stalesgd/config/resolved_run.hpp"
#include "stalesgd/data/dataset.hpp"
#include "stalesgd/engine/progress.hpp"
#include "stalesgd/metrics/records.hpp"
#include "stalesgd/theory/runtime.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

// What to do with a folder that already holds a run.
enum class ExistingRun {
  kRefuse,     // an Error, as `train --out` (nothing is touched)
  kOverwrite,  // replace it, as `train --force`
  kResume,     // continue it from its checkpoint, as `train --resume`: the checkpoint must be
               // this run's (same options and data), else an Error and nothing is touched
};

struct RunFolderOptions {
  std::filesystem::path dir{};
  ExistingRun existing = ExistingRun::kRefuse;
  // argv as given, for summary.json's provenance and run.log; empty: no provenance recorded.
  std::vector<std::string> command_line{};
  // How run.log's first line names the run, e.g. "run 'k-async' of" (the race); empty: none.
  std::string label{};
  const std::atomic<bool>* interrupt = nullptr;  // set (e.g. by a signal handler): stop cleanly
  ProgressSink* progress = nullptr;              // may be null
};

struct FolderRun {
  RunRecord record;
  std::optional<RuntimePrediction> theory;  // summary.json's "theory"
  // Why the run was cut short (diverged, failed workers, stalled, an exception or a failed
  // write): the one line summary.json records with "status": "incomplete"; empty otherwise.
  std::string error;
};

// Trains `run` on `data` into options.dir. An Error: the folder is in use or holds a run that
// `existing` does not allow, a checkpoint that is missing, damaged or another run's, a write
// that failed, or what train() refuses. A run cut short still writes what it recorded and
// returns it with `error` set.
Result<FolderRun> run_into_folder(const ResolvedRun& run, const Dataset& data,
                                  const RunFolderOptions& options);

}  // namespace stalesgd
