// Helpers for the MPI engine's tests: whether this build has MPI, the sanitizers' settings for
// Open MPI's processes, and a `stalesgd train --engine mpi` job under tools/mpirun.sh.
#pragma once

#include <string>

#include <catch2/catch.hpp>

#include "support/fixtures.hpp"

namespace stalesgd::test {

#ifndef STALESGD_HAVE_MPI
constexpr bool kHaveMpi = false;
#else
constexpr bool kHaveMpi = true;
#endif

inline void require_mpi() {
  if (!kHaveMpi) {
    FAIL(
        "this build has no MPI: run tools/setup.sh (it installs openmpi-bin libopenmpi-dev), "
        "then reconfigure and rebuild (tools/build.sh)");
  }
}

// Sanitizer builds: Open MPI's libraries are not instrumented, so the reports from inside them
// are suppressed, theirs only (tsan.supp, lsan.supp; docs/distributed.md, "Sanitizers"). Leak
// checking is off in the MPI processes of an AddressSanitizer build: Open MPI keeps allocations
// until exit in plugins it has already unloaded, whose frames LeakSanitizer cannot name, so no
// suppression can match them. ASan's memory-error checks stay on; the thread engine's tests
// check the shared engine code for leaks. Ignored by a build without sanitizers.
inline std::string sanitizer_env() {
  const std::string dir = STALESGD_SOURCE_DIR "/tests/engine/mpi/";
  return "export TSAN_OPTIONS=\"${TSAN_OPTIONS:+$TSAN_OPTIONS:}suppressions=" + dir +
         "tsan.supp\" LSAN_OPTIONS=\"${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=" + dir +
         "lsan.supp\" ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0\"; ";
}

// Runs `command` through the shell from the source tree, with the sanitizers' settings for
// Open MPI; stdout and stderr merged.
inline CliResult run_mpi_shell(const std::string& command) {
  return run_shell(sanitizer_env() + command);
}

// `stalesgd train --engine mpi` on `ranks` ranks; a softmax on MNIST, evaluated at the ends.
// `env`: variables for the job, e.g. "STALESGD_MPI_CLOCK=estimate".
inline CliResult mpi_train(int ranks, const std::string& args, const std::string& env = "") {
  return run_mpi_shell(env + " timeout 60 tools/mpirun.sh -np " + std::to_string(ranks) +
                       " " STALESGD_CLI
                       " train --engine mpi --model softmax --batch 16 --eval-every 1000s "
                       "--no-progress " +
                       args);
}

}  // namespace stalesgd::test
