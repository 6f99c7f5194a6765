// --resume: a run's options from its checkpoint, and the options given beside it against them.
#include "experiment/resume_options.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "config/option_table.hpp"
#include "output/summary_status.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {
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

bool given_flag(const std::vector<std::string>& flags, std::string_view flag) {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

}  // namespace

Status check_resume_flags(const fs::path& dir, const TrainerOptions& given,
                          const std::vector<std::string>& flags) {
  if (given_flag(flags, "force")) {
    return Error{
        fmt::format("--force and --resume exclude each other: --resume {} continues the "
                    "run there, --force --out {} replaces it; give one",
                    dir.string(), dir.string())};
  }
  std::error_code ec;
  if (given_flag(flags, "out") &&
      fs::weakly_canonical(given.out_dir, ec) != fs::weakly_canonical(dir, ec)) {
    return Error{
        fmt::format("--out {} conflicts with --resume {}: a resumed run writes into its "
                    "own folder",
                    given.out_dir.string(), dir.string())};
  }
  return {};
}

Status check_resume_folder(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return {};
  return Error{fmt::format("--resume {}: no such folder; give the --out of the run to continue",
                           dir.string())};
}

Result<ResumedRun> read_resumed_run(const fs::path& dir) {
  if (auto s = check_resume_folder(dir); !s) return s.error();
  // A run killed leaves summary.json saying "running"; one stopped by a signal, "interrupted".
  if (const auto summary = read_summary_status(dir);
      summary.finished() && summary.stop_reason != "interrupted") {
    return Error{fmt::format("{} holds a finished run (summary.json says {}); nothing to resume",
                             dir.string(), summary.status.empty() ? "no status" : summary.status)};
  }
  auto payload = read_checkpoint(dir);
  if (!payload) return payload.error();
  StateReader in(*payload);
  CheckpointHeader header = load_header(in);
  if (!in.ok()) return Error{fmt::format("{}: {}", (dir / kCheckpointFile).string(), in.error())};
  // The run's own flags, as the checkpoint recorded them.
  auto recorded = options_from_args(header.args);
  if (!recorded) {
    return Error{fmt::format("{}: {}; was it written by another version of stalesgd?",
                             (dir / kCheckpointFile).string(), recorded.error().message)};
  }
  ResumedRun run{std::move(recorded).value(), std::move(payload).value(), std::move(header)};
  run.options.out_dir = dir;
  run.options.resume_dir = dir;
  return run;
}

Status apply_given_options(ResumedRun& run, const TrainerOptions& given,
                           const std::vector<std::string>& flags) {
  // --force and --out are checked again, so that no caller skips them.
  if (auto s = check_resume_flags(run.options.resume_dir, given, flags); !s) return s;
  TrainerOptions& o = run.options;
  o.progress = given.progress;
  o.progress_every_s = given.progress_every_s;
  // Flags given beside --resume must agree with the run's: a resumed run is the same run.
  for (const auto& flag : flags) {
    if (flag == "resume" || flag == "out" || flag == "force" || flag == "no-progress" ||
        flag == "progress-every") {
      continue;
    }
    if (flag == "data-dir") {  // the data may have moved; it is the same data
      o.data_dir = given.data_dir;
      continue;
    }
    if (flag == "save-model") {  // where the final parameters go is no part of the run
      o.save_model = given.save_model;
      continue;
    }
    const OptionDecl* d = find_option(flag);
    if (d == nullptr || d->get(given) != d->get(o)) {
      return Error{fmt::format(
          "--{} conflicts with the run's --{} {}: --resume continues a run with the flags in its "
          "checkpoint",
          flag, flag, checkpoint_value(run.header.args, flag))};
    }
  }
  return {};
}

}  // namespace stalesgd
