// The Monte Carlo's split into chunks (private): how many, and the estimate for a given count,
// which benchmarks/tbb_bench.cpp compares with the single simulation of one chunk.
#pragma once

#include <cstdint>

#include "stalesgd/theory/runtime.hpp"

namespace stalesgd {

// The chunks monte_carlo_runtime splits `iterations` updates of P = `workers` into: 8, halved
// while a chunk's warm-up of 10 P updates would exceed a tenth of its share; a function of P
// and N only, never of the thread count.
int monte_carlo_chunks(int workers, std::uint64_t iterations);

// monte_carlo_runtime with `chunks` independent simulations (1, 2, 4, 8, 16 or 32: a divisor of
// the 32 batches), chunk c seeded from (seed, c), each simulating its warm-up and 32 / chunks
// batches as a oneTBB task. With 1 chunk: one simulation on the calling thread, the estimate
// monte_carlo_runtime gave before the chunks.
Result<MonteCarloEstimate> monte_carlo_runtime_in_chunks(
    const RuleConfig& rule, const StragglerProfile& profile, std::uint64_t iterations,
    std::uint64_t seed, DelayMode mode, double compute_s, int chunks, const Machine& machine = {});

}  // namespace stalesgd
