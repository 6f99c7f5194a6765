// train_mpi: the MPI engine's entry point on every rank: rank 0 serves, the others work.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "engine/caught_failure.hpp"
#include "engine/mpi/mpi_runtime.hpp"
#include "engine/mpi/mpi_server.hpp"
#include "engine/mpi/rank_workers.hpp"

namespace stalesgd::mpi::open_mpi {

Result<RunRecord> train(RunContext& ctx) {
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
    auto server = std::make_unique<mpi::MpiServer>(ctx, mpi::ranks());
    auto run = server->run();
    // A rank that never answered may still have a send of ours in MPI's hands, reading the
    // server's parameter buffers: they stay until the process ends, which it does soon
    // (mpi::finalize ends the job without that rank).
    if (!server->all_answered()) (void)server.release();
    return run;
  }
  // --resume: rank 0 restores its state first and tells every rank whether it could.
  if (ctx.resume != nullptr) {
    if (auto s = mpi::agree({}); !s) return s.error();
  }
  // mpirun's SIGTERM (a Ctrl-C, or the job ended because a rank died): rank 0 tells this rank
  // to stop and waits for its records; if that has not ended the process within a few
  // seconds (rank 0 is gone, or another rank holds up MPI_Finalize), leave: a worker rank has
  // nothing to write.
  if (ctx.interrupt != nullptr) {
    std::thread([flag = ctx.interrupt] {
      while (!flag->load(std::memory_order_relaxed)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      std::this_thread::sleep_for(std::chrono::seconds(3));
      std::_Exit(143);
    }).detach();
  }
  try {
    mpi::RankWorkers workers(ctx, mpi::rank());
    workers.run();
  } catch (...) {
    // Rank 0 would wait for this rank forever, so end the whole job: memory or threads running
    // out with exit 1, a bug with 3.
    const CaughtFailure failure = caught_failure("the worker rank");
    fmt::print(stderr, "stalesgd: error: rank {}: {}\n", mpi::rank(), failure.message);
    mpi::abort(failure.cause == FailureCause::kBug ? 3 : 1);
  }
  return RunRecord{};
}

}  // namespace stalesgd::mpi::open_mpi
