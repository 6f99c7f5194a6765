// `stalesgd train --resume DIR`: the run's flags from its checkpoint (experiment/resume_options,
// which stalesgd.train(resume=DIR) shares), then train() continues it (docs/reliability.md).
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "engine/mpi/mpi_runtime.hpp"
#include "experiment/resume_options.hpp"
#include "output/folder_lock.hpp"

namespace stalesgd::cli {
namespace fs = std::filesystem;

int run_resume(const TrainerOptions& given, const std::vector<std::string>& flags,
               const std::vector<std::string>& command_line) {
  const fs::path dir = given.resume_dir;
  if (auto s = check_resume_flags(dir, given, flags); !s) return fail(s.error().message, 2);
  // The folder is ours before anything in it is read, and for the whole resumed run: a second
  // process on it is refused (rank 0 alone writes under MPI; every rank hears the refusal).
  FolderLock lock;
  Status locked;
  if (mpi::reports()) {
    if (auto s = check_resume_folder(dir); !s) {
      locked = s;
    } else if (auto l = FolderLock::acquire(dir)) {
      lock = std::move(l).value();
    } else {
      locked = l.error();
    }
  }
  if (auto s = mpi::agree(locked); !s) return fail(s.error().message);
  // Every rank reads the checkpoint (on another host, its copy of the folder): one that cannot
  // stops them all, named by rank 0.
  auto run = read_resumed_run(dir);
  if (auto s = mpi::agree(run ? Status{} : Status{run.error()}); !s) return fail(s.error().message);
  if (auto s = apply_given_options(*run, given, flags); !s) return fail(s.error().message, 2);
  return run_train(run->options, ResumePoint{std::move(run->payload), std::move(run->header)},
                   command_line);
}

}  // namespace stalesgd::cli
