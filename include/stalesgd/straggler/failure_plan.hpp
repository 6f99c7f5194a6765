// FailurePlan: the workers that `--fail` makes fail, when and how ("w3:crash@2s;w5:hang@4s"),
// parsed once by ResolvedRun. A crash is a worker that dies and whose server hears of it at
// once; a hang is a worker that stops responding, which the server only finds by
// --worker-timeout (docs/rules.md, "Failed workers"). It sits with the straggler delays: both
// are injected faults of the workers, and ResolvedRun (config) may include this folder but not
// the engine's.
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

struct FailurePlan {
  std::vector<PlannedFailure> failures;  // by worker, each worker at most once

  bool empty() const { return failures.empty(); }
  // Worker w's failure, or nullptr when it does not fail.
  const PlannedFailure* of(int worker) const;
  // Canonical text, parses back to the same plan: "none" or "w3:crash@2s;w5:hang@4s".
  std::string describe() const;
};

// Grammar: "none" (or empty), or ';'-separated items "w<N>:crash@<time>" / "w<N>:hang@<time>",
// time as parse_duration writes it. Errors are one line naming the item, the problem and the
// fix: a worker >= `workers`, a worker named twice, an unknown kind, a bad time.
Result<FailurePlan> parse_failure_plan(std::string_view spec, int workers);

}  // namespace stalesgd
