// Entry point of the `stalesgd` CLI: parses, dispatches, and turns every failure into one line.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "engine/mpi/mpi_runtime.hpp"
#include "util/live_line.hpp"
#include "util/memory.hpp"

namespace stalesgd::cli {

namespace {
// A worker rank's last failure, unsaid: rank 0 says the ones every rank shares (end_failed_worker).
std::string g_unsaid;
}  // namespace

int fail(const std::string& message, int status) {
  // Under MPI every rank parses the same flags and agrees on start-up errors: rank 0 speaks.
  if (!mpi::reports()) {
    g_unsaid = message;
    return status;
  }
  // The live progress line goes first: the error is the last line, never glued to it.
  live_line::clear();
  fmt::print(stderr, "stalesgd: error: {}\n", message);
  return status;
}

namespace {

int rank_of_a_job();

// `stalesgd train ... --engine mpi`: MPI must start before any thread does (docs/distributed.md).
// So must `stalesgd calibrate` under mpirun, which measures the link (docs/machine.md).
bool wants_mpi(int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == "calibrate") return rank_of_a_job() >= 0;
  if (argc < 2 || std::string_view(argv[1]) != "train") return false;
  for (int i = 2; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--engine=mpi" ||
        (a == "--engine" && i + 1 < argc && std::string_view(argv[i + 1]) == "mpi")) {
      return true;
    }
  }
  return false;
}

// The rank mpirun gave this process when it started more than one, else -1: `stalesgd train`
// under mpirun without --engine mpi would train P = 1 thread runs side by side, each into the
// same --out.
int rank_of_a_job() {
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (size == nullptr || rank == nullptr || std::atoi(size) < 2) return -1;
  return std::atoi(rank);
}

// A worker rank of an MPI job that failed. Rank 0, failing too, says why and ends every rank
// by MPI_Abort (mpi::finalize), wherever it waits: a finalize here would wait for ever for a
// rank 0 that failed alone. So this rank waits for that abort; one that failed alone (say, a
// file missing on its host) then names itself and ends the job, the lowest such rank first, so
// that it alone speaks.
[[noreturn]] void end_failed_worker(int status) {
  std::this_thread::sleep_for(std::chrono::seconds(9 + std::min(mpi::rank(), 11)));
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  fmt::print(stderr, "stalesgd: error: rank {} (host {}): {}\n", mpi::rank(), host, g_unsaid);
  mpi::abort(status);
}

}  // namespace
}  // namespace stalesgd::cli

int main(int argc, char** argv) {
  // A file-size limit (ulimit -f) makes a write past it fail with EFBIG, which every writer
  // reports as a failed write (docs/reliability.md), instead of killing the process mid-row.
  std::signal(SIGXFSZ, SIG_IGN);
#ifdef STALESGD_HAVE_MPI
  stalesgd::mpi::use_open_mpi();  // --engine mpi: the library reaches MPI only through this
#endif
  const bool mpi = stalesgd::cli::wants_mpi(argc, argv);
  if (const int rank = stalesgd::cli::rank_of_a_job();
      !mpi && rank >= 0 && argc >= 2 && std::string_view(argv[1]) == "train") {
    // Rank 0 alone says it and exits 2, mpirun's status; the others exit 0, without starting
    // MPI. Were they to exit 2 first, mpirun would end the job, rank 0 with it, before the line.
    if (rank != 0) return 0;
    fmt::print(stderr,
               "stalesgd: error: started by mpirun with {} ranks but without --engine mpi: add "
               "--engine mpi (rank 0 serves, the other ranks work), or run stalesgd train "
               "without mpirun for the thread engine\n",
               std::getenv("OMPI_COMM_WORLD_SIZE"));
    return 2;
  }
  try {
    if (mpi) {
      if (auto s = stalesgd::mpi::init(&argc, &argv); !s) {
        return stalesgd::cli::fail(s.error().message, 2);
      }
    }
    const int status = stalesgd::cli::run_cli(argc, argv);
    if (status != 0 && !stalesgd::mpi::reports()) stalesgd::cli::end_failed_worker(status);
    return stalesgd::mpi::finalize(status);
  } catch (const std::bad_alloc&) {
    // Memory ran out where no command caught it (a run's own failures are caught and written
    // as "failed"): the machine's limit, not a bug.
    fmt::print(stderr, "stalesgd: error: {}\n", stalesgd::out_of_memory_message("stalesgd"));
    if (stalesgd::mpi::active()) stalesgd::mpi::abort(1);
    return 1;
  } catch (const std::exception& e) {
    // Only bugs and worker failures reach here; still one line, still non-zero. Under MPI the
    // other ranks may wait for this one: end them too.
    fmt::print(stderr, "stalesgd: error: internal error: {}\n", e.what());
    if (stalesgd::mpi::active()) stalesgd::mpi::abort(3);
    return 3;
  }
}
