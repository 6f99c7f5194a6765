// The steps of a run into a folder (experiment/run_folder.hpp) that `stalesgd train`, whose MPI
// ranks split them (rank 0 alone writes), and the race share with run_into_folder: open the
// folder's journal and run.log, then train into them and write the outputs.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "output/provenance.hpp"
#include "output/run_journal.hpp"
#include "stalesgd/experiment/run_folder.hpp"
#include "stalesgd/model/model.hpp"
#include "util/logging.hpp"

namespace stalesgd {

// A run folder's open files; both null on an MPI rank that does not write.
struct OpenRunFolder {
  std::unique_ptr<RunJournal> journal;
  std::unique_ptr<logging::RunLog> log;
};

// Opens DIR's journal (`existing` as RunJournal::open; `offsets` where a resumed run's journal
// continues) and run.log, whose first line is `first_line`.
Result<OpenRunFolder> open_run_folder(const std::filesystem::path& dir,
                                      RunJournal::Existing existing, const JournalOffsets& offsets,
                                      const std::string& first_line);

struct FolderRunIo {
  const std::atomic<bool>* interrupt = nullptr;
  ProgressSink* progress = nullptr;
  const std::string* resume = nullptr;      // a checkpoint's payload to continue from
  Provenance provenance;                    // begun before the run; no command line: none recorded
  std::unique_ptr<Model>* model = nullptr;  // built by the caller (TrainIo::model); may be null
};

// Trains into `folder` and, when it has a journal, writes workers.csv and summary.json and logs
// the run's end (and its failed workers) to run.log. An Error: train() refused, or a write
// failed; the caller logs it.
Result<FolderRun> train_into_folder(const ResolvedRun& run, const Dataset& data,
                                    OpenRunFolder& folder, FolderRunIo io);

}  // namespace stalesgd
