// Which MPI this process has: none until mpi::install() (use_open_mpi(), from the stalesgd_mpi
// library), and then every call of mpi_runtime.hpp goes to it. Without one, --engine mpi fails
// in one line saying how to get it, and the process is rank 0 of 1.
#include <cstdlib>

#include "engine/mpi/mpi_runtime.hpp"
#include "util/build_info.hpp"

namespace stalesgd::mpi {
namespace {

// Set once by main's thread before any other thread exists (mpi_runtime.hpp).
const Backend* g_backend = nullptr;

Error missing() {
  return Error{
      "--engine mpi needs Open MPI, which this program was built without: install "
      "openmpi-bin libopenmpi-dev (tools/setup.sh does) and rebuild (tools/build.sh)"};
}

}  // namespace

void install(const Backend& backend) {
  static const Backend kept = backend;
  g_backend = &kept;
  note_library("Open MPI", backend.version());  // summary.json's provenance
}

bool available() {
  return g_backend != nullptr;
}

Status init(int* argc, char*** argv) {
  return g_backend ? g_backend->init(argc, argv) : missing();
}
int finalize(int status) {
  return g_backend ? g_backend->finalize(status) : status;
}
void end_without_finalize(bool host_cut_off, const std::atomic<bool>* interrupt) {
  if (g_backend) g_backend->end_without_finalize(host_cut_off, interrupt);
}
void abort(int exit_code) {
  if (g_backend) g_backend->abort(exit_code);
  std::_Exit(exit_code);
}
bool active() {
  return g_backend && g_backend->active();
}
int rank() {
  return g_backend ? g_backend->rank() : 0;
}
int ranks() {
  return g_backend ? g_backend->ranks() : 1;
}
Status agree(const Status& mine) {
  return g_backend ? g_backend->agree(mine) : mine;
}
Result<PingPong> ping_pong(const std::vector<double>& bytes, double budget_s) {
  if (g_backend) return g_backend->ping_pong(bytes, budget_s);
  return Error{"the ping-pong needs Open MPI, which this program was built without"};
}
Status fit_workers(TrainerOptions& options) {
  if (g_backend) return g_backend->fit_workers(options);
  if (options.engine == EngineKind::kThread) return {};
  return missing();
}

}  // namespace stalesgd::mpi

namespace stalesgd {
Result<RunRecord> train_mpi(RunContext& ctx) {
  return mpi::g_backend ? mpi::g_backend->train(ctx) : mpi::missing();
}
}  // namespace stalesgd
