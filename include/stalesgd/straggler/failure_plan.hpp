// FailurePlan: the workers that `--fail` makes fail, when and how ("w3:crash@2s;w5:hang@4s"),
// parsed once by ResolvedRun. A crash is a worker that dies and whose server hears of it at
// once; a hang is a worker that stops responding, which the server only finds by
// --worker-timeout (docs/rules.md, "Failed workers"). With --engine mpi a whole worker rank can
// fail too ("rank2:crash@3s": its process is killed; "rank2:hang@3s": it is stopped). It sits with
// the straggler delays: both are injected faults of the workers, and ResolvedRun (config) may
// include this folder but not the engine's.
//
// Thread safety: immutable once parsed; safe to share between threads.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "stalesgd/util/result.hpp"

namespace stalesgd {

enum class FailureKind {
  kCrash,  // the worker dies; its server learns of it at once
  kHang,   // the worker stops responding; its server learns of it by the worker timeout
};
// "crash", "hang" (workers.csv, summary.json).
const char* to_string(FailureKind kind);

struct PlannedFailure {
  int worker = 0;
  FailureKind kind = FailureKind::kCrash;
  double at_s = 0.0;  // seconds since the run started (virtual seconds on the virtual clock)
};

// --engine mpi: a whole worker rank fails (the process dies, or stops), with all its workers.
struct PlannedRankFailure {
  int rank = 1;
  FailureKind kind = FailureKind::kCrash;
  double at_s = 0.0;  // seconds since the run started
};

struct FailurePlan {
  std::vector<PlannedFailure> failures;   // by worker, each worker at most once
  std::vector<PlannedRankFailure> ranks;  // by rank, each rank at most once (--engine mpi)

  bool empty() const { return failures.empty() && ranks.empty(); }
  // Worker w's failure, or nullptr when it does not fail.
  const PlannedFailure* of(int worker) const;
  // Worker rank r's failure, or nullptr.
  const PlannedRankFailure* of_rank(int rank) const;
  // Canonical text, parses back to the same plan: "none" or "w3:crash@2s;w5:hang@4s;rank2:...".
  std::string describe() const;
};

// Grammar: "none" (or empty), or ';'-separated items "w<N>:crash@<time>" / "w<N>:hang@<time>",
// and with --engine mpi "rank<N>:crash@<time>" / "rank<N>:hang@<time>" for a whole worker rank
// (its process is killed, or stopped), time as parse_duration writes it. `ranks`: the job's
// ranks with --engine mpi, 0 otherwise. Errors are one line naming the item, the problem and the
// fix: a worker >= `workers`, a rank that is not a worker rank, a worker or rank named twice, a
// rank item without MPI, an unknown kind, a bad time.
Result<FailurePlan> parse_failure_plan(std::string_view spec, int workers, int ranks = 0);

}  // namespace stalesgd
