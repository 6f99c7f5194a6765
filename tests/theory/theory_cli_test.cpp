// `stalesgd theory`: JSON output with closed form and Monte Carlo, and one-line errors.
#include <limits>

#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "stalesgd/theory/runtime.hpp"
#include "support/fixtures.hpp"
#include "support/sanitized.hpp"
#include "util/subprocess.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

TEST_CASE("theory CLI prints the closed form, Monte Carlo and P H_P as JSON", "[theory][cli]") {
  auto r = run_cli({"theory", "--rule", "k-sync", "--workers", "8", "--k", "2", "--delay",
                    "exp:mean=20ms", "--json"});
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.output);
  const auto& cell = j["rules"][0];
  CHECK(cell["closed_form"]["seconds_per_iteration"].get<double>() ==
        Approx((harmonic(8) - harmonic(6)) * 0.020));
  const double mc = cell["monte_carlo"]["seconds_per_iteration"].get<double>();
  const double ci = cell["monte_carlo"]["ci95"].get<double>();
  CHECK(std::abs(mc - cell["closed_form"]["seconds_per_iteration"].get<double>()) < 2 * ci);
  CHECK(j["sync_over_async"]["closed_form"].get<double>() == Approx(8 * harmonic(8)));
}

TEST_CASE("theory CLI without --rule tabulates every rule", "[theory][cli]") {
  auto r =
      run_cli({"theory", "--workers", "4", "--delay", "uniform:5ms..15ms", "--samples", "2000"});
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("k-batch-async") && Contains("E[X_{K:P}] (numerical)") &&
                           Contains("E[T_sync] / E[T_async]"));
}

TEST_CASE("theory CLI rejects bad rules, K and specs in one line", "[theory][cli]") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--rule", "k-sync", "--workers", "4", "--k", "9", "--delay", "exp:mean=1ms"}, "--k 9"},
      {{"--rule", "k-sync", "--workers", "4", "--k", "0", "--delay", "exp:mean=1ms"},
       "1 <= K <= P"},
      {{"--rule", "nope", "--delay", "exp:mean=1ms"}, "unknown rule 'nope'"},
      {{"--rule", "async", "--delay", "exp:mean=1"}, "no unit"},
      {{"--rule", "async"}, "--delay is required"},
      {{"--rule", "async", "--delay", "none"}, "no positive mean"},
      {{"--rule", "async", "--delay", "pareto:scale=1ms,shape=0.5"}, "infinite mean"},
      {{"--workers", "0", "--delay", "exp:mean=1ms"}, "--workers 0"},
  };
  for (const auto& [args, expected] : cases) {
    std::vector<std::string> full{"theory"};
    full.insert(full.end(), args.begin(), args.end());
    auto r = run_cli(full);
    INFO(r.output);
    CHECK(r.exit_code != 0);
    CHECK(line_count(r.output) == 1);
    CHECK_THAT(r.output, Contains(expected));
  }
}

TEST_CASE("theory CLI refuses --samples beyond the memory in one line", "[theory][cli]") {
  // Warm-up + samples wrapped around 64 bits (a segfault) or asked for 800 GB (std::bad_alloc).
  for (const std::string samples : {"18446744073709551615", "100000000000"}) {
    auto r =
        run_cli({"theory", "--rule", "async", "--delay", "exp:mean=1ms", "--samples", samples});
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.output) == 1);
    CHECK_THAT(r.output, Contains("stalesgd: error: --samples " + samples + " needs ") &&
                             Contains(" GB to keep every update's time, more than half of the ") &&
                             Contains(" or fewer"));
  }
  // The largest count named is accepted by the check, one more is not.
  const std::uint64_t max = monte_carlo_max_iterations(8);
  CHECK(check_monte_carlo_size(8, max).ok());
  CHECK_FALSE(check_monte_carlo_size(8, max + 1).ok());
  CHECK_THAT(check_monte_carlo_size(8, max + 1).error().message,
             Contains(fmt::format("give --samples {} or fewer", max)));
  // The library refuses it too, rather than crash.
  const auto profile = StragglerProfile::parse("exp:mean=1ms", 8);
  REQUIRE(profile.ok());
  const auto mc =
      monte_carlo_runtime({"async", 8, 1}, *profile, std::numeric_limits<std::uint64_t>::max(), 1);
  REQUIRE_FALSE(mc.ok());
  CHECK_THAT(mc.error().message, Contains("--samples 18446744073709551615 needs"));
}

// Not in the sanitizer builds: ASan and TSan reserve terabytes of address space for their
// shadow memory at start-up, so no process starts under a `ulimit -v`; the plain suite runs it.
#if !STALESGD_TEST_SANITIZED
TEST_CASE("theory CLI bounds --samples by ulimit -v when it is lower", "[theory][cli]") {
  // 2,000,000 KiB of address space: about 128 million updates fit in half of it.
  const auto r = run_process({"/bin/sh", "-c",
                              "ulimit -v 2000000 && exec " STALESGD_CLI
                              " theory --rule async --delay exp:mean=1ms --samples 200000000"});
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.output) == 1);
  CHECK_THAT(r.output, Contains("--samples 200000000 needs 1.6 GB") &&
                           Contains("more than half of the 2.05 GB of memory here"));
}
#endif
