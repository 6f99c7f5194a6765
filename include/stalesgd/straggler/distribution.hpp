// Delay distributions: the random extra time X (seconds) a minibatch takes (docs/stragglers.md),
// parsed from spec text such as "exp:mean=20ms". The grammar is in docs/stragglers.md.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "stalesgd/util/result.hpp"
#include "stalesgd/util/seed.hpp"

namespace stalesgd {

// X = shift_s + Exp(mean mean_s); the plain exponential is shift_s = 0. The runtime theory
// (docs/theory.md) has closed forms for this family only.
struct ShiftedExponentialParams {
  double shift_s;
  double mean_s;  // mean of the exponential part; E[X] = shift_s + mean_s
};

// One delay distribution. Immutable after parsing, so every method is safe to call from any
// thread at once; sample() touches only the caller's generator.
//
// Every family but the mixture samples by inversion, X = quantile(U) with U uniform on (0, 1)
// from the generator's top 53 bits, so a seed fixes the draws bit for bit and nothing depends
// on the std:: distributions' unspecified algorithms.
class Distribution {
 public:
  virtual ~Distribution() = default;

  virtual double sample(Rng& rng) const = 0;       // seconds, >= 0
  virtual double mean() const = 0;                 // seconds; +infinity when there is none
  virtual double cdf(double x_seconds) const = 0;  // P(X <= x)
  virtual double quantile(double p) const = 0;     // inf{x : cdf(x) >= p}, p in [0, 1]
  virtual std::string describe() const = 0;        // canonical spec; parses back to the same
  // {shift, mean} for exp and shifted-exp, nullopt for every other family.
  virtual std::optional<ShiftedExponentialParams> as_shifted_exponential() const {
    return std::nullopt;
  }
};

// Parses one distribution (no per-worker clauses), e.g. "pareto:scale=5ms,shape=1.5".
// A trace file ("trace:delays.csv") is read now, relative to base_dir; as a Distribution it is
// the empirical distribution of all its values (StragglerProfile replays it row by row).
// The error message is one line, "delay spec '<text>': <problem>; <fix>".
Result<std::unique_ptr<Distribution>> parse_distribution(
    std::string_view text, const std::filesystem::path& base_dir = ".");

}  // namespace stalesgd
