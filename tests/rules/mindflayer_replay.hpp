// MindFlayer's rounds replayed from the delay streams alone (rules/mindflayer.hpp): worker w's
// round j takes draws B_w(j-1)+1 .. B_w j of its stream (each attempt is one draw, and every engine
// draws a worker's attempts in that order) and keeps those within the worker's limit. What an
// engine records must be this, update by update: no attempt outlived its limit, none was cut
// short of it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "stalesgd/straggler/profile.hpp"

namespace stalesgd::test {

// (update, worker) -> the gradients it keeps, for rounds 1..rounds; an i.i.d. delay spec;
// worker w makes attempts[w] attempts a round (B_w).
inline std::map<std::pair<std::uint64_t, int>, int> mindflayer_kept(
    const std::string& delay, std::uint64_t seed, const std::vector<double>& limits,
    const std::vector<int>& attempts, std::uint64_t rounds) {
  const int workers = static_cast<int>(limits.size());
  auto profile = StragglerProfile::parse(delay, workers);
  REQUIRE(profile.ok());
  std::map<std::pair<std::uint64_t, int>, int> kept;
  for (int w = 0; w < workers; ++w) {
    DelaySampler draws(*profile, w, seed);
    for (std::uint64_t j = 1; j <= rounds; ++j) {
      int n = 0;
      for (int a = 0; a < attempts[std::size_t(w)]; ++a) {
        n += draws.next(0.0) <= limits[std::size_t(w)] ? 1 : 0;
      }
      if (n > 0) kept[{j, w}] = n;
    }
  }
  return kept;
}

// The same with one B for every worker.
inline std::map<std::pair<std::uint64_t, int>, int> mindflayer_kept(
    const std::string& delay, std::uint64_t seed, const std::vector<double>& limits, int attempts,
    std::uint64_t rounds) {
  return mindflayer_kept(delay, seed, limits, std::vector<int>(limits.size(), attempts), rounds);
}

}  // namespace stalesgd::test
