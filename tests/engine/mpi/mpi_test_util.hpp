// Helpers for the MPI engine's tests: whether this build has MPI, the sanitizers' settings for
// Open MPI's processes, and a `stalesgd train --engine mpi` job under tools/mpirun.sh.
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

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

using Table = std::vector<std::map<std::string, std::string>>;

// A CSV of the run's outputs, a map per row from column name to text.
inline Table read_csv(const std::filesystem::path& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::string line;
  std::getline(in, line);
  std::vector<std::string> names;
  std::stringstream head(line);
  for (std::string f; std::getline(head, f, ',');) names.push_back(f);
  Table rows;
  while (std::getline(in, line)) {
    std::stringstream s(line);
    auto& row = rows.emplace_back();
    for (std::size_t i = 0; i < names.size(); ++i) std::getline(s, row[names[i]], ',');
  }
  return rows;
}

inline long num(const std::map<std::string, std::string>& row, const std::string& key) {
  return std::stol(row.at(key));
}

struct Gradient {
  long worker;
  long staleness;
  double duration_s;  // its minibatch's assignment to the push's receipt
};

// A finished run's records, by update.
struct Run {
  std::map<long, std::vector<Gradient>> by_update;
  Table updates;
  Table workers;
  long total(const std::string& field) const {
    long n = 0;
    for (const auto& w : workers) n += num(w, field);
    return n;
  }
};

// The records a run wrote into `dir`; every gradient's measured duration is positive (rank 0's
// assignment to the push's receipt).
inline Run read_run(const std::filesystem::path& dir) {
  Run run;
  for (const auto& g : read_csv(dir / "gradients.csv")) {
    const double duration_s = std::stod(g.at("duration_s"));
    run.by_update[num(g, "iteration")].push_back(
        {num(g, "worker"), num(g, "staleness"), duration_s});
    CHECK(duration_s > 0.0);
  }
  run.updates = read_csv(dir / "updates.csv");
  run.workers = read_csv(dir / "workers.csv");
  return run;
}

inline bool distinct_workers(const std::vector<Gradient>& gs) {
  std::set<long> ws;
  for (const auto& g : gs) ws.insert(g.worker);
  return ws.size() == gs.size();
}

}  // namespace stalesgd::test
