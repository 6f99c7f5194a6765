// The shared, immutable state behind StragglerProfile and its DelaySamplers.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "stalesgd/straggler/distribution.hpp"
#include "straggler/trace.hpp"

namespace stalesgd::detail {

// What a spec assigns to a worker: i.i.d. draws from dist, or, for a trace, row-by-row replay
// of the worker's column.
struct DelaySource {
  std::shared_ptr<const Distribution> dist;
  const straggler::TraceTable* trace = nullptr;  // owned by dist; non-null means replay
};

// A stretch of time during which one worker's delays come from one source times one factor.
struct Segment {
  double start_s;      // in effect from this time on (the first segment starts at 0)
  std::size_t source;  // index into ProfileState::sources
  double factor;       // every delay is multiplied by it
};

struct ProfileState {
  int workers = 0;
  std::vector<DelaySource> sources;            // [0] is the base distribution
  std::vector<std::vector<Segment>> timeline;  // per worker, by start_s, never empty
  const Distribution* iid = nullptr;           // sources[0].dist when every worker uses only it
  std::string description;                     // canonical spec
  int draws_per_job = 1;  // a job's delay is the sum of this many draws (--local-steps)
};

}  // namespace stalesgd::detail
