// A race's --engine mpi run: it cannot run inside the race's process (MPI starts its ranks
// itself), so the race launches `mpirun -np (P / W + 1) stalesgd train --engine mpi ...` with
// the run's options as flags, waits for it, and reads back the summary.json that rank 0 wrote
// into the run's folder. The launcher is `mpirun --oversubscribe --quiet` (as root also
// --allow-run-as-root), or the words of STALESGD_MPIRUN when set (e.g. "mpirun --hostfile
// hosts"; docs/distributed.md). An interrupt of the race reaches the job as SIGINT, and rank 0
// writes what it recorded.
//
// Thread safety: one call at a time per process (it waits for its child).
#pragma once

#include <atomic>
#include <filesystem>

#include <nlohmann/json_fwd.hpp>

#include "stalesgd/experiment/experiment.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

// Runs `run` under mpirun with its outputs in `dir`; its summary.json. The job's stderr (its
// one-line errors) passes through; its stdout (the run's summary table) is dropped.
Result<nlohmann::json> run_under_mpirun(const ExperimentRun& run, const std::filesystem::path& dir,
                                        const std::atomic<bool>* interrupt);

}  // namespace stalesgd
