// The divergence message every engine reports.
#include "engine/run_context.hpp"

#include <fmt/format.h>

namespace stalesgd {

Error divergence_error(std::uint64_t iteration, double loss, int worker, double lr) {
  return Error{
      fmt::format("training diverged at iteration {}: the minibatch loss of worker {} "
                  "became {}; the learning rate {} is probably too large, try --lr {}",
                  iteration, worker, loss, lr, lr / 10.0)};
}

}  // namespace stalesgd
