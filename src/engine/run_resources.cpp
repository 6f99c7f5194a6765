// check_run_resources: lower bounds on what a run takes, against what the process may have.
#include "engine/run_resources.hpp"

#include <fmt/format.h>

#include "util/memory.hpp"
#include "util/thread_room.hpp"

namespace stalesgd {

Status check_run_resources(const TrainerOptions& o, std::size_t num_params) {
  const bool mpi = o.engine == EngineKind::kMpi;
  const bool threads = !o.sequential && (mpi || o.clock == ClockKind::kReal);
  const auto workers = static_cast<std::uint64_t>(mpi ? o.workers_per_rank : o.workers);
  if (threads) {
    // A thread per worker, and the server's, the wake timer's and the evaluator's two.
    if (auto s = check_threads(
            workers + 4,
            fmt::format("--workers {} on the real clock{}", o.workers,
                        mpi ? fmt::format(" ({} per rank)", workers) : std::string()),
            "use fewer --workers, or --clock virtual, which runs every worker on one thread");
        !s) {
      return s;
    }
  }
  // The server's values, and a gradient (or a module's clone) per worker computing at once.
  const std::uint64_t copies = 1 + (threads ? workers : 1);
  return check_memory(
      copies * num_params * sizeof(float),
      fmt::format("{} copies of the model's {} values (the server's and one per worker)", copies,
                  num_params),
      "use fewer --workers or a smaller model, or run where more memory is allowed");
}

}  // namespace stalesgd
