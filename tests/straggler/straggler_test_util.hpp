// Shared helpers for the straggler tests: parses that must succeed or fail, and the
// statistical checks of a distribution's draws against its own mean() and quantile().
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "stalesgd/straggler/distribution.hpp"
#include "stalesgd/straggler/profile.hpp"

namespace stalesgd::test {

inline std::unique_ptr<Distribution> parse_ok(std::string_view text,
                                              const std::filesystem::path& base = ".") {
  auto r = parse_distribution(text, base);
  INFO("spec: " << text << "\nerror: " << (r.ok() ? "" : r.error().message));
  REQUIRE(r.ok());
  return std::move(r).value();
}

inline std::string parse_error(std::string_view text, const std::filesystem::path& base = ".") {
  auto r = parse_distribution(text, base);
  INFO("spec: " << text);
  REQUIRE_FALSE(r.ok());
  return r.error().message;
}

inline StragglerProfile profile_ok(std::string_view spec, int workers,
                                   const std::filesystem::path& base = ".") {
  auto r = StragglerProfile::parse(spec, workers, base);
  INFO("spec: " << spec << "\nerror: " << (r.ok() ? "" : r.error().message));
  REQUIRE(r.ok());
  return std::move(r).value();
}

inline std::string profile_error(std::string_view spec, int workers,
                                 const std::filesystem::path& base = ".") {
  auto r = StragglerProfile::parse(spec, workers, base);
  INFO("spec: " << spec);
  REQUIRE_FALSE(r.ok());
  return r.error().message;
}

// n draws from one generator, sorted, with their mean and standard deviation.
struct Draws {
  std::vector<double> sorted;
  double mean = 0;
  double sd = 0;
};

inline Draws draw(const Distribution& d, int n = 200'000, std::uint64_t seed = 12345) {
  Rng rng(seed);
  Draws out;
  out.sorted.resize(static_cast<std::size_t>(n));
  for (double& x : out.sorted) x = d.sample(rng);
  std::sort(out.sorted.begin(), out.sorted.end());
  out.mean = std::accumulate(out.sorted.begin(), out.sorted.end(), 0.0) / n;
  double ss = 0;
  for (const double x : out.sorted) ss += (x - out.mean) * (x - out.mean);
  out.sd = std::sqrt(ss / (n - 1));
  return out;
}

// The sample mean is within 5 standard errors of `expected` (the CLT; needs a finite variance).
inline void check_mean(const Draws& draws, double expected) {
  const double se = draws.sd / std::sqrt(static_cast<double>(draws.sorted.size()));
  INFO("sample mean " << draws.mean << ", expected " << expected << ", standard error " << se);
  CHECK(std::abs(draws.mean - expected) <= 5 * se + 1e-15);
}

// The empirical p-quantile (the ceil(p n)-th smallest draw) lies between quantile(p - t) and
// quantile(p + t), t = 5 binomial standard errors: holds for atoms and continuous parts alike.
inline void check_quantiles(const Draws& draws, const Distribution& d) {
  const auto n = static_cast<double>(draws.sorted.size());
  for (const double p : {0.1, 0.5, 0.9, 0.99}) {
    const double emp = draws.sorted[static_cast<std::size_t>(std::ceil(p * n)) - 1];
    const double t = 5 * std::sqrt(p * (1 - p) / n) + 1 / n;
    INFO("p = " << p << ": empirical " << emp << ", quantile " << d.quantile(p));
    CHECK(d.quantile(p - t) <= emp);
    CHECK(emp <= d.quantile(p + t));
  }
}

// cdf(quantile(p)) == p for a continuous distribution, to rounding.
inline void check_cdf_inverts_quantile(const Distribution& d) {
  for (const double p : {0.001, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999}) {
    INFO("p = " << p);
    CHECK(d.cdf(d.quantile(p)) == Approx(p).epsilon(1e-12).margin(1e-14));
  }
}

// describe() parses back to a distribution with the same description and the same draws.
inline void check_round_trip(const Distribution& d, const std::filesystem::path& base = ".") {
  const auto again = parse_ok(d.describe(), base);
  CHECK(again->describe() == d.describe());
  Rng a(7), b(7);
  for (int i = 0; i < 100; ++i) REQUIRE(d.sample(a) == again->sample(b));
}

}  // namespace stalesgd::test
