// `stalesgd train --resume DIR`: the run's flags from its checkpoint, then train() continues it
// (docs/reliability.md).
#include <algorithm>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "config/option_table.hpp"
#include "engine/mpi/mpi_runtime.hpp"
#include "output/checkpoint.hpp"
#include "output/folder_lock.hpp"
#include "output/summary_status.hpp"
#include "util/state_stream.hpp"

namespace stalesgd::cli {
namespace fs = std::filesystem;

namespace {

// The value the checkpoint's command line gives `flag`, for messages.
std::string checkpoint_value(const std::vector<std::string>& args, const std::string& flag) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] != "--" + flag) continue;
    if (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) return args[i + 1];
    return "(on)";
  }
  return "(not given)";
}

}  // namespace

int run_resume(const TrainerOptions& given, const std::vector<std::string>& flags,
               const std::vector<std::string>& command_line) {
  const fs::path dir = given.resume_dir;
  std::error_code ec;
  if (std::find(flags.begin(), flags.end(), "force") != flags.end()) {
    return fail(fmt::format("--force and --resume exclude each other: --resume {} continues the "
                            "run there, --force --out {} replaces it; give one",
                            dir.string(), dir.string()),
                2);
  }
  // The folder is ours before anything in it is read, and for the whole resumed run: a second
  // process on it is refused (rank 0 alone writes under MPI; every rank hears the refusal).
  FolderLock lock;
  Status locked;
  if (mpi::reports()) {
    if (!fs::is_directory(dir, ec)) {
      locked =
          Error{fmt::format("--resume {}: no such folder; give the --out of the run to "
                            "continue",
                            dir.string())};
    } else if (auto l = FolderLock::acquire(dir)) {
      lock = std::move(l).value();
    } else {
      locked = l.error();
    }
  }
  if (auto s = mpi::agree(locked); !s) return fail(s.error().message);
  // A run killed leaves summary.json saying "running"; one stopped by a signal, "interrupted".
  if (const auto summary = read_summary_status(dir);
      summary.finished() && summary.stop_reason != "interrupted") {
    return fail(fmt::format("{} holds a finished run (summary.json says {}); nothing to resume",
                            dir.string(), summary.status.empty() ? "no status" : summary.status));
  }
  auto payload = read_checkpoint(dir);
  if (!payload) return fail(payload.error().message);
  StateReader in(*payload);
  const CheckpointHeader header = load_header(in);
  if (!in.ok()) {
    return fail(fmt::format("{}: {}", (dir / kCheckpointFile).string(), in.error()));
  }

  // The run's own flags, as the checkpoint recorded them.
  auto recorded = options_from_args(header.args);
  if (!recorded) {
    return fail(fmt::format("{}: {}; was it written by another version of stalesgd?",
                            (dir / kCheckpointFile).string(), recorded.error().message));
  }
  TrainerOptions o = std::move(recorded).value();
  o.out_dir = dir;
  o.resume_dir = dir;
  o.progress = given.progress;
  o.progress_every_s = given.progress_every_s;
  // Flags given beside --resume must agree with the run's: a resumed run is the same run.
  for (const auto& flag : flags) {
    if (flag == "resume" || flag == "no-progress" || flag == "progress-every") continue;
    if (flag == "data-dir") {  // the data may have moved; it is the same data
      o.data_dir = given.data_dir;
      continue;
    }
    if (flag == "out") {
      if (fs::weakly_canonical(given.out_dir, ec) != fs::weakly_canonical(dir, ec)) {
        return fail(fmt::format("--out {} conflicts with --resume {}: a resumed run writes into "
                                "its own folder",
                                given.out_dir.string(), dir.string()),
                    2);
      }
      continue;
    }
    const OptionDecl* d = find_option(flag);
    if (d == nullptr || d->get(given) != d->get(o)) {
      return fail(fmt::format("--{} conflicts with the run's --{} {}: --resume continues a run "
                              "with the flags in its checkpoint",
                              flag, flag, checkpoint_value(header.args, flag)),
                  2);
    }
  }
  return run_train(o, ResumePoint{std::move(payload).value(), header}, command_line);
}

}  // namespace stalesgd::cli
