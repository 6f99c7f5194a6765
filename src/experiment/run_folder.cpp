// A run into a folder (stalesgd/experiment/run_folder.hpp): open the journal and run.log, train,
// log the end, write workers.csv and summary.json. `stalesgd train` and the race take the same
// steps (experiment/folder_run.hpp).
#include "stalesgd/experiment/run_folder.hpp"

#include <fmt/format.h>

#include "config/option_table.hpp"
#include "engine/caught_failure.hpp"
#include "engine/train_io.hpp"
#include "experiment/folder_run.hpp"
#include "model/architectures.hpp"
#include "output/checkpoint.hpp"
#include "output/folder_lock.hpp"
#include "output/recorded_options.hpp"
#include "output/run_writer.hpp"
#include "util/atomic_file.hpp"
#include "util/build_info.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {

Result<OpenRunFolder> open_run_folder(const std::filesystem::path& dir,
                                      RunJournal::Existing existing, const JournalOffsets& offsets,
                                      const std::string& first_line) {
  OpenRunFolder folder;
  auto journal = RunJournal::open(dir, existing, offsets);
  if (!journal) return journal.error();
  folder.journal = std::move(journal).value();
  // run.log beside the outputs: what stderr showed, down to debug (docs/outputs.md).
  auto log = logging::RunLog::open(dir);
  if (!log) return log.error();
  folder.log = std::move(log).value();
  folder.log->record(spdlog::level::info, first_line);
  return folder;
}

Result<FolderRun> train_into_folder(const ResolvedRun& run, const Dataset& data,
                                    OpenRunFolder& folder, FolderRunIo io) {
  logging::RunLog* log = folder.log.get();
  // run.toml first: `train --config DIR/run.toml` runs this run again (docs/outputs.md); then
  // summary.json with "status": "running".
  if (folder.journal) {
    // A TorchScript model's LibTorch is in the provenance from the start.
    if (const auto& name = run.options().model.name; model::is_torchscript_name(name)) {
      model::load_torchscript_plugin(name);
    }
    io.provenance.dataset = data.name;
    io.provenance.data_digest = data.digest;
    if (log != nullptr) {
      log->record(spdlog::level::info, "build: " + describe(build_info()));
      log->record(spdlog::level::info,
                  fmt::format("data: {}, CRC-32 of its files {}", data.name, data.digest));
    }
    // run.log's first lines failed: nothing has run yet, so this is the one line.
    if (log != nullptr && log->failed()) return Error{log->failure()};
    if (auto s = write_file_atomically(folder.journal->dir() / "run.toml",
                                       options_to_toml(run.options()));
        !s) {
      return s.error();
    }
    // summary.json says "running" from the start; the end replaces it.
    if (auto s = write_running_summary(folder.journal->dir(), run, io.provenance); !s) {
      return s.error();
    }
  }
  // A run that ends before it has a record (refused at its start, memory or threads running
  // out, a bug thrown out of an engine) still leaves summary.json saying "failed", not
  // "running". A resumed one keeps its folder as it was: its checkpoint resumes once the cause
  // is gone.
  const auto write_failed = [&](const std::string& message) {
    if (!folder.journal || io.resume != nullptr) return;
    RunRecord failed;
    failed.stop_reason = StopReason::kFailed;
    failed.stop_message = message;
    io.provenance.ended = std::chrono::system_clock::now();
    (void)finish_run_outputs(*folder.journal, run, failed, std::nullopt, message, io.provenance);
  };
  Result<RunRecord> record = Error{""};
  try {
    record = train(run, data,
                   TrainIo{.interrupt = io.interrupt,
                           .journal = folder.journal.get(),
                           .resume = io.resume,
                           .progress = io.progress,
                           .log = log != nullptr ? log->logger().get() : nullptr,
                           .model = io.model,
                           .run_log = log});
  } catch (...) {
    const CaughtFailure failure = caught_failure("the run");
    write_failed(failure.message);
    if (failure.cause == FailureCause::kBug) throw;  // exit 3, as main says
    return Error{failure.message};
  }
  if (!record) {
    write_failed(record.error().message);
    return record.error();
  }
  FolderRun out{std::move(record).value(), std::nullopt, {}};
  const RunRecord& r = out.record;
  switch (r.stop_reason) {
    case StopReason::kDiverged:
      out.error = r.divergence;
      break;
    case StopReason::kFailed:
    case StopReason::kWorkersFailed:
    case StopReason::kStalled:
    case StopReason::kInterrupted:  // --engine mpi: ended while a rank did not answer
      out.error = r.stop_message;
      break;
    default:
      break;
  }
  if (!folder.journal) return out;  // an MPI rank that does not write
  io.provenance.ended = std::chrono::system_clock::now();
  if (log != nullptr) {
    for (const auto& w : r.workers) {
      if (!w.failed) continue;
      log->record(spdlog::level::warn, fmt::format("worker {} failed ({}) at {:.3f} s", w.worker,
                                                   w.failure, w.failed_at_s));
    }
    log->record(
        spdlog::level::info,
        fmt::format("end: {} after {} iterations, {:.3f} s{}{}", to_string(r.stop_reason),
                    r.updates.empty() ? 0 : r.updates.back().iteration, r.wall_s,
                    r.evals.empty() ? std::string()
                                    : fmt::format(", test error {:.4f}", r.evals.back().test_error),
                    run.options().clock == ClockKind::kReal
                        ? fmt::format(", scoring tail {:.3f} s", r.scoring_tail_s)
                        : std::string()));
  }
  // run.log failed after the run's last check (its end line, say): the run is failed as on any
  // failed write, summary.json saying so, and the caller gets the one line.
  const bool log_failed = log != nullptr && log->failed() && out.error.empty();
  if (log_failed) out.error = log->failure();
  out.theory = predict_runtime(run, 20000, r.machine ? &*r.machine : nullptr);
  if (auto s = finish_run_outputs(*folder.journal, run, r, out.theory, out.error, io.provenance);
      !s) {
    return s.error();
  }
  if (log_failed) return Error{out.error};
  return out;
}

Result<FolderRun> run_into_folder(const ResolvedRun& run, const Dataset& data,
                                  const RunFolderOptions& options) {
  Provenance provenance = Provenance::begin(options.command_line);
  // The folder is ours before anything in it is read, and for the whole run.
  auto lock = FolderLock::acquire(options.dir);
  if (!lock) return lock.error();
  // --resume: the checkpoint must be this run's, on this data, before a file is touched.
  std::optional<std::string> payload;
  CheckpointHeader header;
  if (options.existing == ExistingRun::kResume) {
    auto read = read_checkpoint(options.dir);
    if (!read) return read.error();
    payload = std::move(read).value();
    StateReader in(*payload);
    header = load_header(in);
    if (!in.ok()) {
      return Error{fmt::format("{}: {}", (options.dir / kCheckpointFile).string(), in.error())};
    }
    if (auto same = check_identity(header, run.options(), data); !same) return same.error();
    if (auto kept = check_recorded_options(options.dir, run.options()); !kept) {
      return kept.error();
    }
  }
  const auto existing = options.existing == ExistingRun::kResume ? RunJournal::Existing::kContinue
                        : options.existing == ExistingRun::kOverwrite
                            ? RunJournal::Existing::kOverwrite
                            : RunJournal::Existing::kRefuse;
  std::string first = payload ? "resume:" : "start:";
  if (!options.label.empty()) first += " " + options.label;
  if (!options.command_line.empty()) first += " " + shell_quoted(options.command_line);
  auto folder =
      open_run_folder(options.dir, existing, payload ? header.offsets : JournalOffsets{}, first);
  if (!folder) return folder.error();
  auto out = train_into_folder(run, data, *folder,
                               {.interrupt = options.interrupt,
                                .progress = options.progress,
                                .resume = payload ? &*payload : nullptr,
                                .provenance = std::move(provenance)});
  if (!out) folder->log->record(spdlog::level::err, out.error().message);
  return out;
}

}  // namespace stalesgd
