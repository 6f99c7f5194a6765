// What an exception that ends one of a run's threads (or an engine's loop) means for the run
// (docs/reliability.md, "Exit status and record, by fault"): the user's module failing
// (ModelError), the machine running out (std::bad_alloc; a thread or resource the system would
// not give, std::system_error EAGAIN or ENOMEM), or a bug. The first two end the run failed with
// exit 1, a bug with exit 3; every one ends it with its files written.
#pragma once

#include <string>
#include <string_view>

#include "stalesgd/metrics/records.hpp"

namespace stalesgd {

enum class FailureCause {
  kBug,        // "internal error in ...": exit 3
  kModel,      // the user's module: exit 1
  kResources,  // memory or threads ran out: exit 1, the limit named
};

struct CaughtFailure {
  std::string message;  // the one line
  std::string detail;   // more for run.log (a TorchScript traceback); may be empty
  FailureCause cause = FailureCause::kBug;
};

// The failure the exception being handled means, met in `where` ("worker 3", "the evaluator").
// Call only inside a catch block.
CaughtFailure caught_failure(std::string_view where);

// Marks the record's failure as the module's or the machine's (model_failed, resources_failed).
void mark_cause(RunRecord& run, FailureCause cause);

}  // namespace stalesgd
