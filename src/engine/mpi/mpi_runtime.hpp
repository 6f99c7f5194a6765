// The process side of --engine mpi, callable in every program: MPI's start in main and its end
// at exit, this process's rank, the start-up agreement between ranks, P from the number of
// ranks, and the engine's entry point. The library does not link MPI (a program using it needs
// none): these calls go to the Open MPI backend once use_open_mpi() installed it, which the
// stalesgd_mpi library defines and the CLI calls first thing; before that, or in a build
// without MPI, every call says how to get MPI (backend.cpp; docs/distributed.md).
//
// Thread safety: init() and finalize() are called once, by main's thread, before and after
// everything else; the other functions only read what init() set and may be called from any
// thread in between.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "engine/run_context.hpp"
#include "stalesgd/config/trainer_options.hpp"
#include "stalesgd/machine/ping_pong.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd::mpi {

// True when this build has the MPI engine (MPI was found at configure time).
bool available();

// MPI_Init_thread(MPI_THREAD_MULTIPLE). An Error (and MPI left uninitialised or finalised):
// the build has no MPI, the process was not started by mpirun, it is the only rank, or MPI
// cannot give MPI_THREAD_MULTIPLE.
Status init(int* argc, char*** argv);
// The end of main: MPI_Finalize when init() succeeded and returns `status`. After
// end_without_finalize() it does not (MPI_Finalize waits for every rank): the job is ended with
// MPI_Abort and `status`, after waiting up to a few seconds for mpirun to end it first when a
// host may be cut off (docs/distributed.md, "Faults"). Nor when rank 0 ends with a non-zero
// `status`: it has said why, and MPI_Abort ends every rank wherever it waits.
int finalize(int status);
// Some rank did not answer the end of the run: the job must end without it. `host_cut_off`:
// every rank of some host is silent, so mpirun may be about to declare that host lost (its own
// keepalive) and end the job itself; an abort meanwhile would wait for the lost host.
// `interrupt`: the run's signal flag (mpirun's SIGTERM), read by finalize(); may be null.
void end_without_finalize(bool host_cut_off, const std::atomic<bool>* interrupt);
// Ends every rank of the job at once, this process's output flushed first: for failures that
// the other ranks cannot learn of, and a failed job's end (finalize).
[[noreturn]] void abort(int exit_code);

bool active();  // init() succeeded and finalize() has not run
int rank();     // this process's rank; 0 when not active
int ranks();    // the number of ranks; 1 when not active
// Whether this process reports results and errors the ranks share: rank 0, or not under MPI.
inline bool reports() {
  return !active() || rank() == 0;
}

// Collective: every rank passes how its own start-up went; all get the same answer, success
// or the error of the lowest failing rank, prefixed with that rank and its host. No-op when
// not active.
Status agree(const Status& mine);

// `stalesgd calibrate` under mpirun (docs/machine.md), collective: ranks 0 and 1 time round
// trips of a message of each size in `bytes`, about `budget_s` in all, while the other ranks
// wait sleeping. Rank 0 gets the curve and rank 1's host; the other ranks an empty curve. An
// Error when MPI is not active.
struct PingPong {
  std::vector<PingPongPoint> points;
  std::string host, peer_host;  // ranks 0's and 1's (MPI_Get_processor_name)
};
Result<PingPong> ping_pong(const std::vector<double>& bytes, double budget_s);

// --engine mpi: P = (ranks - 1) * workers_per_rank into options.workers; an Error when
// --workers was given and differs, or when MPI is not active. No-op for --engine thread.
Status fit_workers(TrainerOptions& options);

}  // namespace stalesgd::mpi

namespace stalesgd {
// The MPI engine (train_mpi.cpp): rank 0 returns the run's record, the worker ranks an empty
// one (rank 0 reports and writes the outputs).
Result<RunRecord> train_mpi(RunContext& ctx);
}  // namespace stalesgd

namespace stalesgd::mpi {

// The functions above as Open MPI implements them (mpi_runtime.cpp, train_mpi.cpp).
struct Backend {
  Status (*init)(int* argc, char*** argv);
  int (*finalize)(int status);
  void (*end_without_finalize)(bool host_cut_off, const std::atomic<bool>* interrupt);
  void (*abort)(int exit_code);
  bool (*active)();
  int (*rank)();
  int (*ranks)();
  Status (*agree)(const Status& mine);
  Status (*fit_workers)(TrainerOptions& options);
  Result<RunRecord> (*train)(RunContext& ctx);
  Result<PingPong> (*ping_pong)(const std::vector<double>& bytes, double budget_s);
  std::string (*version)();  // "4.1.4": the Open MPI the program was built with
};

// Installs the backend; before init(), from main's thread.
void install(const Backend& backend);
// Installs Open MPI's (defined in the stalesgd_mpi library, which links MPI).
void use_open_mpi();

namespace open_mpi {
Result<RunRecord> train(RunContext& ctx);                                       // train_mpi.cpp
Result<PingPong> ping_pong(const std::vector<double>& bytes, double budget_s);  // ping_pong.cpp
}  // namespace open_mpi

}  // namespace stalesgd::mpi
