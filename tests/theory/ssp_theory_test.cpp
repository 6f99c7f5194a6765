// SSP's runtime by Monte Carlo (docs/theory.md, "SSP"): the same EventSimulator and protocol
// as the virtual engine, so its prediction matches the engine's measurement; a huge bound is
// async, s = 0 with equal workers is lock-step.
#include <cmath>
#include <limits>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "engine/engine_test_util.hpp"
#include "rules/rule_test_util.hpp"
#include "stalesgd/theory/runtime.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

namespace {

StragglerProfile profile(const std::string& spec, int p) {
  auto r = StragglerProfile::parse(spec, p);
  REQUIRE(r.ok());
  return *r;
}

RuleConfig ssp(int workers, std::int64_t s) {
  auto c = resolve_rule(spec_with("ssp", 0, "staleness-bound", s), workers);
  REQUIRE(c.ok());
  return *c;
}

// A run's seconds per iteration with a 95% interval from 32 batch means after a warm-up of
// 10 P updates, as the Monte Carlo's.
struct Measured {
  double seconds = 0.0;
  double ci95 = 0.0;
};
Measured batch_means(const RunRecord& run, int workers) {
  const std::size_t warmup = 10 * static_cast<std::size_t>(workers);
  const std::size_t per = (run.updates.size() - warmup) / 32;
  std::vector<double> means;
  double prev = run.updates[warmup - 1].wall_s;
  for (std::size_t b = 0; b < 32; ++b) {
    const double end = run.updates[warmup + (b + 1) * per - 1].wall_s;
    means.push_back((end - prev) / static_cast<double>(per));
    prev = end;
  }
  double mean = 0.0, var = 0.0;
  for (double m : means) mean += m / 32.0;
  for (double m : means) var += (m - mean) * (m - mean) / 31.0;
  return {mean, 2.0395 * std::sqrt(var / 32.0)};
}

}  // namespace

TEST_CASE("ssp theory: a bound no worker reaches is async, estimate for estimate",
          "[theory][ssp]") {
  const auto prof = profile("exp:mean=10ms;w0=x8", 8);
  const auto free = monte_carlo_runtime(ssp(8, 1'000'000'000), prof, 8000, 3);
  const auto async = monte_carlo_runtime({"async", 8, 1}, prof, 8000, 3);
  REQUIRE(free.ok());
  REQUIRE(async.ok());
  CHECK(free->seconds == async->seconds);
  CHECK(free->mean_staleness == async->mean_staleness);
}

TEST_CASE("ssp theory: s = 0 with equal workers is lock-step", "[theory][ssp]") {
  // Every worker pushes once per round and the round lasts the slowest's draw: P updates per
  // E[X_{P:P}] = H_P / mu, and the i-th push of a round is i updates stale.
  constexpr int kP = 8;
  const auto prof = profile("exp:mean=10ms", kP);
  const auto mc = monte_carlo_runtime(ssp(kP, 0), prof, 16000, 5);
  REQUIRE(mc.ok());
  const double lockstep = harmonic(kP) * 0.010 / kP;
  INFO("mc " << mc->seconds << " +- " << mc->ci95 << ", lock-step " << lockstep);
  CHECK(std::abs(mc->seconds - lockstep) <= 2.0 * mc->ci95);
  CHECK(mc->mean_staleness == Approx((kP - 1) / 2.0).epsilon(1e-9));
}

TEST_CASE("ssp theory: the Monte Carlo predicts the virtual engine's seconds per iteration",
          "[theory][ssp][virtual]") {
  constexpr int kP = 4;
  const std::string delay = "exp:mean=5ms;w0=x8";
  const std::int64_t s = GENERATE(0, 2);
  const auto mc = monte_carlo_runtime(ssp(kP, s), profile(delay, kP), 20000, 1);
  REQUIRE(mc.ok());
  auto o = quick_options("ssp", kP, 0, delay);
  o.rule.params.set("staleness-bound", std::int64_t{s});
  o.clock = ClockKind::kVirtual;
  o.iterations = 3240;  // the warm-up and 32 batches of 100
  const auto measured = batch_means(run_ok(o), kP);
  INFO("s = " << s << ": engine " << measured.seconds << " +- " << measured.ci95 << ", theory "
              << mc->seconds << " +- " << mc->ci95);
  // Two independent estimates of one mean: within twice their combined 95% half-width.
  CHECK(std::abs(measured.seconds - mc->seconds) <= 2.0 * std::hypot(measured.ci95, mc->ci95));
  CHECK(measured.ci95 < 0.1 * measured.seconds);  // the test has teeth: a wrong gate is ~5x off
}

TEST_CASE("ssp theory CLI: --rule ssp --staleness-bound s", "[theory][cli][ssp]") {
  auto r = run_cli({"theory", "--rule", "ssp", "--staleness-bound", "2", "--workers", "4",
                    "--delay", "exp:mean=5ms;w0=x8", "--samples", "4000", "--json"});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto cell = nlohmann::json::parse(r.output)["rules"][0];
  CHECK(cell["rule"] == "ssp");
  CHECK(cell["staleness_bound"] == 2);
  CHECK(cell["monte_carlo"]["seconds_per_iteration"].get<double>() > 0.0);
  CHECK_FALSE(cell.contains("closed_form"));
  auto missing = run_cli({"theory", "--rule", "ssp", "--workers", "4", "--delay", "exp:mean=5ms"});
  CHECK(missing.exit_code != 0);
  CHECK(line_count(missing.output) == 1);
  auto backup = run_cli({"theory", "--rule", "backup", "--backups", "1", "--workers", "4",
                         "--delay", "exp:mean=5ms", "--json"});
  REQUIRE(backup.exit_code == 0);
  const auto b = nlohmann::json::parse(backup.output)["rules"][0];
  CHECK(b["rule"] == "backup");
  CHECK(b["k"] == 3);
}
