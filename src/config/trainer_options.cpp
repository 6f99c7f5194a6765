#include "stalesgd/config/trainer_options.hpp"

#include "stalesgd/config/resolved_run.hpp"

namespace stalesgd {

const char* to_string(ClockKind clock) {
  return clock == ClockKind::kReal ? "real" : "virtual";
}
const char* to_string(ServerPlacement server) {
  switch (server) {
    case ServerPlacement::kInline:
      return "inline";
    case ServerPlacement::kThread:
      return "thread";
    case ServerPlacement::kHogwild:
      return "hogwild";
  }
  return "?";
}

const char* to_string(EngineKind engine) {
  return engine == EngineKind::kThread ? "thread" : "mpi";
}

Status validate(const TrainerOptions& options) {
  auto resolved = ResolvedRun::resolve(options);
  if (!resolved) return resolved.error();
  return {};
}

}  // namespace stalesgd
