// Runtime theory: harmonic numbers, order statistics, each closed form against the
// Monte-Carlo simulation of the same rule state machines, and the Monte Carlo's chunks
// (the same estimate for a seed at any thread count).
#include "stalesgd/theory/runtime.hpp"

#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <catch2/catch.hpp>

#include "theory/monte_carlo.hpp"

using namespace stalesgd;

namespace {
StragglerProfile profile(const std::string& spec, int p) {
  auto r = StragglerProfile::parse(spec, p);
  REQUIRE(r.ok());
  return *r;
}
}  // namespace

TEST_CASE("harmonic numbers and exponential order statistics", "[theory]") {
  CHECK(harmonic(0) == 0.0);
  CHECK(harmonic(1) == 1.0);
  CHECK(harmonic(4) == Approx(25.0 / 12.0));
  auto exp = parse_distribution("exp:mean=10ms");
  REQUIRE(exp.ok());
  // E[X_{P:P}] = H_P / mu: the sync runtime.
  CHECK(expected_order_statistic(**exp, 8, 8) == Approx(harmonic(8) * 0.010));
  CHECK(expected_order_statistic(**exp, 1, 8) == Approx(0.010 / 8));
}

TEST_CASE("numerical order statistics match the uniform closed form", "[theory]") {
  auto u = parse_distribution("uniform:10ms..30ms");
  REQUIRE(u.ok());
  for (int k = 1; k <= 8; ++k) {
    // E[U_{K:P}] on [a, b] = a + (b - a) K / (P + 1).
    CHECK(expected_order_statistic(**u, k, 8) == Approx(0.010 + 0.020 * k / 9.0).epsilon(1e-4));
  }
}

TEST_CASE("closed forms agree with the Monte-Carlo estimate", "[theory]") {
  constexpr int kP = 8;
  int cells = 0, outside_ci = 0;
  for (const std::string spec : {"exp:mean=10ms", "shifted-exp:shift=5ms,mean=10ms"}) {
    const auto prof = profile(spec, kP);
    for (const std::string rule : {"k-sync", "k-batch-sync", "k-async", "k-batch-async"}) {
      for (int k = 1; k <= kP; ++k) {
        const auto config = resolve_rule({rule, k}, kP);
        REQUIRE(config.ok());
        auto closed = closed_form_runtime(*config, *prof.iid());
        if (!closed) continue;
        auto mc = monte_carlo_runtime(*config, prof, 40000, 7);
        REQUIRE(mc.ok());
        INFO(rule << " K=" << k << " " << spec << ": closed " << closed->seconds << " mc "
                  << mc->seconds << " +- " << mc->ci95);
        if (closed->upper_bound) {
          CHECK(mc->seconds <= closed->seconds + mc->ci95);
          continue;
        }
        ++cells;
        // Every cell within twice the 95% half-width (a ~4 sigma band, so never flaky)...
        CHECK(std::abs(mc->seconds - closed->seconds) <= 2.0 * mc->ci95);
        outside_ci += std::abs(mc->seconds - closed->seconds) > mc->ci95;
      }
    }
  }
  // ...and the interval is honest: about 5% of cells, not many more, fall outside it.
  CHECK(cells >= 40);
  CHECK(outside_ci <= cells / 6);
}

TEST_CASE("shifted exponential: k-async is faster per iteration than k-sync", "[theory]") {
  const auto prof = profile("shifted-exp:shift=10ms,mean=10ms", 8);
  for (int k = 2; k <= 7; ++k) {
    auto ksync = monte_carlo_runtime({"k-sync", 8, k}, prof, 20000, 3);
    auto kasync = monte_carlo_runtime({"k-async", 8, k}, prof, 20000, 3);
    REQUIRE(ksync.ok());
    REQUIRE(kasync.ok());
    INFO("K=" << k);
    CHECK(kasync->seconds + kasync->ci95 < ksync->seconds - ksync->ci95);
  }
}

TEST_CASE("async takes the mean delay over P per iteration under every delay family", "[theory]") {
  for (const std::string spec :
       {"shifted-exp:shift=10ms,mean=10ms", "lognormal:median=10ms,sigma=0.8",
        "pareto:scale=5ms,shape=2.5", "uniform:10ms..30ms"}) {
    const auto prof = profile(spec, 8);
    auto closed = closed_form_runtime({"async", 8, 1}, *prof.iid());
    REQUIRE(closed.has_value());
    INFO(spec);
    CHECK(closed->formula == "E[X] / P");
    CHECK_FALSE(closed->upper_bound);
    CHECK(closed->seconds == Approx(prof.iid()->mean() / 8));
    auto mc = monte_carlo_runtime({"async", 8, 1}, prof, 40000, 5);
    REQUIRE(mc.ok());
    CHECK(std::abs(mc->seconds - closed->seconds) <= 2.0 * mc->ci95);
  }
}

TEST_CASE("no closed form where the paper gives none", "[theory]") {
  auto pareto = parse_distribution("pareto:scale=5ms,shape=1.5");
  REQUIRE(pareto.ok());
  CHECK_FALSE(closed_form_runtime({"k-batch-sync", 8, 2}, **pareto).has_value());
  CHECK_FALSE(closed_form_runtime({"k-async", 8, 2}, **pareto).has_value());
  CHECK(closed_form_runtime({"k-batch-async", 8, 2}, **pareto)->formula == "K E[X] / P");
  auto heavy = parse_distribution("pareto:scale=5ms,shape=0.9");
  REQUIRE(heavy.ok());
  CHECK_FALSE(closed_form_runtime({"k-batch-async", 8, 2}, **heavy).has_value());
}

TEST_CASE("Monte Carlo: chunks by P and N, never by the thread count", "[theory]") {
  CHECK(monte_carlo_chunks(8, 20000) == 8);    // a warm-up of 80 updates per 2500
  CHECK(monte_carlo_chunks(8, 2000) == 2);     // 80 per 1000; 4 chunks would give 80 per 500
  CHECK(monte_carlo_chunks(64, 20000) == 2);   // 640 per 10000
  CHECK(monte_carlo_chunks(256, 20000) == 1);  // 2560: one simulation
  CHECK(monte_carlo_chunks(1, 32) == 1);
  const auto prof = profile("exp:mean=10ms", 4);
  const auto bad =
      monte_carlo_runtime_in_chunks({"async", 4, 1}, prof, 3200, 1, DelayMode::kPad, 0.0, 3);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == "Monte Carlo: 3 chunks do not divide 32 batches");
}

TEST_CASE("Monte Carlo: the same seed gives the same estimate at 1, 2 and 8 threads", "[theory]") {
  const auto prof = profile("shifted-exp:shift=5ms,mean=10ms", 8);
  for (const RuleConfig& rule :
       {RuleConfig{"k-async", 8, 3}, RuleConfig{"k-batch-sync", 8, 2}, RuleConfig{"sync", 8, 8}}) {
    std::vector<MonteCarloEstimate> runs;
    for (int threads : {1, 2, 8}) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      // An arena of `threads` slots, so that 8 threads really run on a 2-core machine.
      tbb::task_arena arena(threads);
      arena.execute([&] {
        auto mc = monte_carlo_runtime(rule, prof, 16000, 11);
        REQUIRE(mc.ok());
        runs.push_back(*mc);
      });
    }
    for (const auto& r : runs) {
      INFO(rule.rule << " K=" << rule.k);
      // Bit for bit: the chunks are combined in chunk order, whoever ran them.
      CHECK(r.seconds == runs[0].seconds);
      CHECK(r.ci95 == runs[0].ci95);
      CHECK(r.mean_staleness == runs[0].mean_staleness);
      CHECK(r.iterations == 16000);
    }
    // And another seed gives another estimate.
    auto other = monte_carlo_runtime(rule, prof, 16000, 12);
    REQUIRE(other.ok());
    CHECK(other->seconds != runs[0].seconds);
  }
}

TEST_CASE("Monte Carlo: 1, 2 or 8 chunks estimate the same E[T]", "[theory]") {
  const auto prof = profile("exp:mean=10ms", 8);
  const RuleConfig rule{"k-sync", 8, 4};
  const double closed = closed_form_runtime(rule, *prof.iid())->seconds;
  for (int chunks : {1, 2, 8}) {
    INFO(chunks << " chunks");
    auto mc = monte_carlo_runtime_in_chunks(rule, prof, 32000, 5, DelayMode::kPad, 0.0, chunks);
    REQUIRE(mc.ok());
    CHECK(mc->iterations == 32000);
    CHECK(std::abs(mc->seconds - closed) <= 2.0 * mc->ci95);
  }
  // monte_carlo_runtime is the chunked estimate with monte_carlo_chunks' count.
  auto by_default = monte_carlo_runtime(rule, prof, 32000, 5);
  auto eight = monte_carlo_runtime_in_chunks(rule, prof, 32000, 5, DelayMode::kPad, 0.0, 8);
  REQUIRE(by_default.ok());
  REQUIRE(eight.ok());
  CHECK(by_default->seconds == eight->seconds);
}

TEST_CASE("Monte Carlo: staleness is the steady state's, after each chunk's warm-up", "[theory]") {
  const auto prof = profile("exp:mean=10ms", 8);
  // Async: each gradient is P - 1 = 7 updates stale on average (a cold start has less).
  auto async = monte_carlo_runtime({"async", 8, 1}, prof, 64000, 2);
  REQUIRE(async.ok());
  CHECK(async->mean_staleness == Approx(7.0).epsilon(0.01));
  auto sync = monte_carlo_runtime({"sync", 8, 8}, prof, 3200, 2);
  REQUIRE(sync.ok());
  CHECK(sync->mean_staleness == 0.0);
}
