// Deterministic seed derivation: one run seed gives every consumer (a worker's delay stream,
// its minibatch sampler, the model initialisation) its own independent, repeatable stream.
#pragma once

#include <cstdint>
#include <random>

namespace stalesgd {

// The random engine used everywhere a seeded stream is needed (libstdc++'s mt19937_64 gives
// the same sequence for the same seed on every run of the same build).
using Rng = std::mt19937_64;

// Which consumer a derived seed is for; a new consumer gets a new value, never reuses one.
enum class SeedStream : std::uint64_t {
  kModelInit = 1,
  kSampler = 2,
  kDelay = 3,
  kTheory = 4,
  kComputeTime = 5,
  kPartition = 6,
};

// SplitMix64 finaliser (Steele, Lea, Flood 2014): a bijective mix, so distinct inputs never
// collide and nearby inputs give unrelated outputs.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Seed for stream `stream` of index `index` (e.g. worker number) under run seed `seed`.
constexpr std::uint64_t derive_seed(std::uint64_t seed, SeedStream stream,
                                    std::uint64_t index = 0) {
  return mix64(mix64(mix64(seed) ^ static_cast<std::uint64_t>(stream)) ^ index);
}

}  // namespace stalesgd
