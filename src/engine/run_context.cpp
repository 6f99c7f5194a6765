// When a run has diverged, and the message every engine reports; a worker's minibatch stream.
#include "engine/run_context.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

namespace stalesgd {

MinibatchSampler RunContext::sampler(int w, std::uint64_t stream_seed) const {
  static const std::vector<std::uint32_t> kAll;
  const auto i = static_cast<std::size_t>(w);
  return {data.train, job_samples(options), stream_seed, i < shards.size() ? shards[i] : kAll};
}

bool diverged(double loss, int classes) {
  return !std::isfinite(loss) ||
         loss > kDivergedLossFactor * std::log(static_cast<double>(std::max(classes, 2)));
}

Error divergence_error(std::uint64_t iteration, double loss, int worker, double lr) {
  return Error{fmt::format(
      "training diverged at iteration {}: the minibatch loss of worker {} became {}{}; the "
      "learning rate {} is probably too large, try --lr {}",
      iteration, worker, loss,
      std::isfinite(loss)
          ? fmt::format(" (over {:g} times a uniform guess's loss)", kDivergedLossFactor)
          : std::string(),
      lr, lr / 10.0)};
}

}  // namespace stalesgd
