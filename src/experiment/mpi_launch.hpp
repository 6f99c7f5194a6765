// A race's --engine mpi run: it cannot run inside the race's process (MPI starts its ranks
// itself), so the race launches `mpirun -np (P / W + 1) stalesgd train --engine mpi ...` with
// the run's options as flags, waits for it, and reads back the summary.json that rank 0 wrote
// into the run's folder. The launcher is `mpirun --oversubscribe --quiet` (as root also
// --allow-run-as-root) with the Open MPI settings of tools/mpirun.sh (mpi_settings()), or
// STALESGD_MPIRUN split as a shell would (e.g. "mpirun --hostfile 'my hosts'";
// docs/distributed.md). An interrupt of the race reaches the job as SIGINT, and rank 0 writes
// what it recorded.
//
// Thread safety: one call at a time per process (it waits for its child).
#pragma once

#include <atomic>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "stalesgd/experiment/experiment.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

// The Open MPI settings (MCA parameter, value) a race's job gets unless its environment sets
// them: the same as tools/mpirun.sh's (a test checks the two agree).
std::vector<std::pair<std::string, std::string>> mpi_settings();
// plm_rsh_args when Open MPI starts its daemons with ssh (no other launch agent named): an
// unreachable host fails in seconds with ssh's one line.
inline constexpr const char* kSshArgs = "-o ConnectTimeout=5 -o BatchMode=yes";

// Runs `run` under mpirun with its outputs in `dir`; its summary.json. The job's stderr (its
// one-line errors) passes through; its stdout (the run's summary table) is dropped.
Result<nlohmann::json> run_under_mpirun(const ExperimentRun& run, const std::filesystem::path& dir,
                                        const std::atomic<bool>* interrupt);

}  // namespace stalesgd
