#include "engine/run_context.hpp"

#include <cmath>

#include <fmt/format.h>

namespace stalesgd {

Error divergence_error(std::uint64_t iteration, double loss, int worker, double lr) {
  return Error{fmt::format("training diverged at iteration {}: the minibatch loss of worker {} "
                           "became {}; the learning rate {} is probably too large, try --lr {}",
                           iteration, worker, loss, lr, lr / 10.0)};
}

void finish_record(const TrainerOptions& options, RunRecord& run) {
  if (options.target_error <= 0.0) return;
  for (const auto& e : run.evals) {
    if (e.test_error <= options.target_error) {
      run.time_to_target_s = e.wall_s;
      return;
    }
  }
}

}  // namespace stalesgd
