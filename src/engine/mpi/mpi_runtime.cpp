// The process side of --engine mpi with Open MPI: init and finalize, rank, the start-up
// agreement and P from the ranks (the contracts: mpi_runtime.hpp), and use_open_mpi(), which
// installs them with the engine (train_mpi.cpp) as the process's MPI backend.
#include "engine/mpi/mpi_runtime.hpp"

#include <dlfcn.h>
#include <link.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "engine/mpi/idle_wait.hpp"

namespace stalesgd::mpi::open_mpi {
namespace {

// Written by init() and finalize() on main's thread only, before and after every other thread
// of the process exists (mpi_runtime.hpp), so plain variables suffice.
bool g_active = false;
int g_rank = 0;
int g_ranks = 1;
// end_without_finalize(): set by the caller's thread once the run's threads are joined, read by
// finalize() on the same thread.
bool g_abandoned = false;
bool g_host_cut_off = false;
const std::atomic<bool>* g_interrupt = nullptr;

bool interrupted() {
  return g_interrupt != nullptr && g_interrupt->load(std::memory_order_relaxed);
}

// How long rank 0 waits for mpirun to end a job whose host went silent: longer than mpirun
// takes to find a host lost with tools/mpirun.sh's keepalive (at most 4 + 4 x 1 s of silence).
constexpr std::chrono::seconds kCutOffGrace{10};

// mpirun and the other launchers Open MPI supports leave one of these in every rank's
// environment; without them MPI_Init would start a singleton (one rank), slowly.
bool launched_by_mpirun() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"}) {
    if (std::getenv(v) != nullptr) return true;
  }
  return false;
}

#if defined(__SANITIZE_THREAD__)
// ThreadSanitizer builds: Open MPI's plugins (mca_*.so) stay loaded until exit. The tests tell
// TSan to ignore the memory accesses of the plugins that move message bytes (their copies into
// a receive buffer can run on any thread inside MPI, handed over through atomics TSan cannot
// see: tests/engine/mpi/tsan.supp), and TSan stops a process that unloads such a library, which
// MPI_Finalize does. Re-opening each with RTLD_NODELETE keeps them. Not in other builds.
void keep_plugins_loaded() {
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void*) {
        const std::string path = info->dlpi_name != nullptr ? info->dlpi_name : "";
        if (path.find("/mca_") != std::string::npos) {
          dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
        }
        return 0;
      },
      nullptr);
}
// Before MPI_Init: the plugins that tsan.supp names `called_from_lib` loaded for good now, from
// Open MPI's component folder (Debian: openmpi/lib/openmpi3 beside libmpi). MPI_Init itself
// unloads a transport that has no peer here (vader in a rank alone on its host), which
// keep_plugins_loaded() comes too late for.
void load_plugins_for_good() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&MPI_Init), &info) == 0 || info.dli_fname == nullptr) return;
  const std::string lib = info.dli_fname;
  const std::string dir = lib.substr(0, lib.rfind('/'));
  for (const std::string folder : {dir + "/openmpi/lib/openmpi3/", dir + "/openmpi3/"}) {
    for (const char* plugin :
         {"mca_pml_ob1.so", "mca_btl_vader.so", "mca_btl_self.so", "mca_btl_tcp.so"}) {
      dlopen((folder + plugin).c_str(), RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE);
    }
  }
}
#else
void keep_plugins_loaded() {}
void load_plugins_for_good() {}
#endif

}  // namespace

Status init(int* argc, char*** argv) {
  const std::string how =
      "run it as tools/mpirun.sh -np N build/stalesgd train --engine mpi ... with N >= 2 "
      "(rank 0 is the server, ranks 1..N-1 the workers)";
  if (!launched_by_mpirun()) return Error{"--engine mpi was not started by mpirun: " + how};
  // mpirun says how many ranks there are: one is refused before MPI starts (which, with one
  // rank, also loads and unloads plugins that a TSan build keeps; see keep_plugins_loaded).
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (size != nullptr && std::string_view(size) == "1") {
    return Error{"--engine mpi needs at least 2 ranks, one server and one worker: " + how};
  }
  load_plugins_for_good();
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    return Error{"MPI_Init_thread failed; see Open MPI's message above"};
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_ranks);
  g_active = true;
  keep_plugins_loaded();
  if (provided < MPI_THREAD_MULTIPLE) {
    finalize(0);
    return Error{
        "this MPI library does not provide MPI_THREAD_MULTIPLE, which --engine mpi "
        "needs (worker threads send while a receive thread receives)"};
  }
  if (g_ranks < 2) {
    finalize(0);
    return Error{"--engine mpi needs at least 2 ranks, one server and one worker: " + how};
  }
  return {};
}

void abort(int exit_code) {
  // What this process printed goes out first: _Exit flushes nothing.
  std::fflush(stdout);
  std::fflush(stderr);
  if (g_active) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

int finalize(int status) {
  if (!g_active) return status;
  if (g_abandoned) {
    std::fflush(stdout);
    std::fflush(stderr);
    // A cut-off host: mpirun finds it lost within seconds (tools/mpirun.sh sets its keepalive)
    // and ends the job, this rank included, by SIGTERM. An abort sent meanwhile would wait for
    // that host to come back.
    if (g_host_cut_off && !interrupted()) {
      const auto until = std::chrono::steady_clock::now() + kCutOffGrace;
      while (!interrupted() && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
    // mpirun is ending the job already (its SIGTERM reached this rank): leave at once.
    if (interrupted()) std::_Exit(status);
    abort(status);
  }
  // A failed run or start-up: rank 0 has said why, and ends every rank wherever it waits, as
  // MPI_Finalize could not (after a failure rank 0 met alone, the others wait for it in the
  // start-up agreement). A worker rank that failed waits for this (tools/cli/main.cpp).
  if (status != 0 && g_rank == 0) abort(status);
  // MPI_Finalize synchronises the ranks and spins while it waits: the worker ranks arrive long
  // before rank 0, which still evaluates and writes its records, and two spinning ranks on two
  // cores starved it (past mpirun's grace after a SIGTERM). Meet in a barrier that sleeps first.
  MPI_Request met = MPI_REQUEST_NULL;
  MPI_Ibarrier(MPI_COMM_WORLD, &met);
  wait_quietly(met, std::chrono::milliseconds(1));
  MPI_Finalize();
  g_active = false;
  g_rank = 0;
  g_ranks = 1;
  return status;
}

void end_without_finalize(bool host_cut_off, const std::atomic<bool>* interrupt) {
  g_abandoned = true;
  g_host_cut_off = host_cut_off;
  g_interrupt = interrupt;
}

bool active() {
  return g_active;
}
int rank() {
  return g_rank;
}
int ranks() {
  return g_ranks;
}

Status agree(const Status& mine) {
  if (!g_active) return mine;
  // The lowest failing rank, or g_ranks when all succeeded; then that rank tells the others
  // its message, so that rank 0 can name it and every rank exits alike.
  const int candidate = mine ? g_ranks : g_rank;
  int failed = g_ranks;
  MPI_Allreduce(&candidate, &failed, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (failed == g_ranks) return {};
  std::string message = mine ? std::string() : mine.error().message;
  if (!mine) {
    char host[MPI_MAX_PROCESSOR_NAME] = {};
    int length = 0;
    MPI_Get_processor_name(host, &length);
    message = fmt::format("(host {}): {}", host, message);
  }
  int length = static_cast<int>(message.size());
  MPI_Bcast(&length, 1, MPI_INT, failed, MPI_COMM_WORLD);
  message.resize(static_cast<std::size_t>(length));
  MPI_Bcast(message.data(), length, MPI_CHAR, failed, MPI_COMM_WORLD);
  return Error{fmt::format("rank {} {}", failed, message)};
}

Status fit_workers(TrainerOptions& o) {
  if (o.engine == EngineKind::kThread) return {};
  if (!g_active) {
    return Error{
        "--engine mpi runs under mpirun: tools/mpirun.sh -np N build/stalesgd train "
        "--engine mpi ..."};
  }
  const int per_rank = std::max(o.workers_per_rank, 1);  // ResolvedRun reports a bad value
  const int p = (g_ranks - 1) * per_rank;
  if (o.workers_given && o.workers != p) {
    const std::string fix = o.workers % per_rank == 0
                                ? fmt::format("start {} ranks", o.workers / per_rank + 1)
                                : std::string("pick a --workers-per-rank that divides it");
    return Error{
        fmt::format("--workers {} does not match this mpirun's {} worker ranks x "
                    "--workers-per-rank {} = {} workers; drop --workers or {}",
                    o.workers, g_ranks - 1, per_rank, p, fix)};
  }
  o.workers = p;
  return {};
}

}  // namespace stalesgd::mpi::open_mpi

namespace stalesgd::mpi {

void use_open_mpi() {
  install({open_mpi::init, open_mpi::finalize, open_mpi::end_without_finalize, open_mpi::abort,
           open_mpi::active, open_mpi::rank, open_mpi::ranks, open_mpi::agree,
           open_mpi::fit_workers, open_mpi::train, open_mpi::ping_pong, [] {
             return fmt::format("{}.{}.{}", OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION,
                                OMPI_RELEASE_VERSION);
           }});
}

}  // namespace stalesgd::mpi
