// `stalesgd theory`: JSON output with closed form and Monte Carlo, and one-line errors.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "stalesgd/theory/runtime.hpp"
#include "support/fixtures.hpp"

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
