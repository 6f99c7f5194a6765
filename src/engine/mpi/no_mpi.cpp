// The MPI engine's stand-in for a build configured without MPI: --engine mpi fails in one line.
#include <cstdlib>

#include "engine/mpi/mpi_runtime.hpp"

namespace stalesgd::mpi {
namespace {
Error missing() {
  return Error{
      "--engine mpi needs Open MPI, which this build was configured without: install "
      "openmpi-bin libopenmpi-dev (tools/setup.sh does) and rebuild (tools/build.sh)"};
}
}  // namespace

bool available() {
  return false;
}
Status init(int*, char***) {
  return missing();
}
int finalize(int status) {
  return status;
}
void end_without_finalize(bool, const std::atomic<bool>*) {}
void abort(int exit_code) {
  std::_Exit(exit_code);
}
bool active() {
  return false;
}
int rank() {
  return 0;
}
int ranks() {
  return 1;
}
Status agree(const Status& mine) {
  return mine;
}
Status fit_workers(TrainerOptions& options) {
  if (options.engine == EngineKind::kThread) return {};
  return missing();
}

}  // namespace stalesgd::mpi

namespace stalesgd {
Result<RunRecord> train_mpi(RunContext&) {
  return mpi::missing();
}
}  // namespace stalesgd
