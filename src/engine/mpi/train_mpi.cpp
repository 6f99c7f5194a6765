// train_mpi: the MPI engine's entry point on every rank: rank 0 serves, the others work.
#include <cstdio>
#include <exception>

#include <fmt/format.h>

#include "engine/mpi/mpi_runtime.hpp"
#include "engine/mpi/mpi_server.hpp"
#include "engine/mpi/rank_workers.hpp"

namespace stalesgd {

Result<RunRecord> train_mpi(RunContext& ctx) {
  if (!mpi::active()) {
    return Error{
        "--engine mpi runs under mpirun with stalesgd train: tools/mpirun.sh -np N "
        "build/stalesgd train --engine mpi ..."};
  }
  // Every rank checks alike (same options, same number of ranks), so all return together.
  const int p = (mpi::ranks() - 1) * ctx.options.workers_per_rank;
  if (ctx.options.workers != p) {
    return Error{
        fmt::format("--workers {} does not match this mpirun's {} worker ranks x "
                    "--workers-per-rank {} = {} workers",
                    ctx.options.workers, mpi::ranks() - 1, ctx.options.workers_per_rank, p)};
  }
  if (mpi::rank() == 0) {
    mpi::MpiServer server(ctx, mpi::ranks());
    return server.run();
  }
  // --resume: rank 0 restores its state first and tells every rank whether it could.
  if (ctx.resume != nullptr) {
    if (auto s = mpi::agree({}); !s) return s.error();
  }
  try {
    mpi::RankWorkers workers(ctx, mpi::rank());
    workers.run();
  } catch (const std::exception& e) {
    // A bug: rank 0 would wait for this rank forever, so end the whole job.
    fmt::print(stderr, "stalesgd: error: rank {}: internal error: {}\n", mpi::rank(), e.what());
    mpi::abort(3);
  }
  return RunRecord{};
}

}  // namespace stalesgd
