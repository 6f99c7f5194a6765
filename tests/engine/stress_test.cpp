// Randomized stress: cells drawn at random (rule, P, K, delay spec, delay mode, a failed
// worker, engine and server placement) on the virtual clock and on real threads, each checked
// against the rule's invariants, the counts and termination. The suite runs a CI-sized sample; for
// a long run (docs/reliability.md) set STALESGD_STRESS_CELLS=10000 and filter on "[stress]".
#include <chrono>
#include <cstdlib>
#include <random>

#include <fmt/format.h>

#include "engine/engine_test_util.hpp"
#include "support/sanitized.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

namespace {

struct Cell {
  TrainerOptions options;
  std::string text;  // to reproduce it: the flags
};

Cell draw(std::mt19937_64& rng, bool real_clock) {
  const auto pick = [&](auto... values) {
    const std::array<std::common_type_t<decltype(values)...>, sizeof...(values)> v{values...};
    return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
  };
  const std::string rule = pick(
      std::string("sync"), std::string("k-sync"), std::string("k-batch-sync"), std::string("async"),
      std::string("k-async"), std::string("k-batch-async"), std::string("ssp"));
  const int p = real_clock ? pick(1, 2, 3, 4, 8) : pick(1, 2, 3, 4, 7, 8, 16, 33);
  int k = 0;
  if (rule.rfind("k-", 0) == 0) k = std::uniform_int_distribution<int>(1, p)(rng);
  const std::string delay =
      real_clock ? pick(std::string("none"), std::string("const:1ms"), std::string("exp:mean=2ms"),
                        std::string("exp:mean=1ms;w0=x5"), std::string("uniform:0ms..4ms"))
                 : pick(std::string("const:10ms"), std::string("exp:mean=10ms"),
                        std::string("shifted-exp:shift=2ms,mean=5ms"),
                        std::string("pareto:shape=1.5,scale=2ms"),
                        std::string("lognormal:mean=5ms,sigma=1"),
                        std::string("exp:mean=5ms;w0=x10;*@0.2s=x2"));
  TrainerOptions o = quick_options(rule, p, k, delay);
  std::string bound;
  if (rule == "ssp") {
    o.rule.params.set("staleness-bound", std::int64_t{pick(0, 1, 3)});
    bound = fmt::format(" --staleness-bound {}", o.rule.params.integer("staleness-bound", 0));
  }
  o.seed = rng();
  o.delay_mode = pick(DelayMode::kPad, DelayMode::kAdd);
  o.iterations = std::uniform_int_distribution<std::uint64_t>(1, 60)(rng);
  o.eval_every_s = 1000.0;
  // One cell in three has a worker crash or hang (docs/rules.md, "Failed workers").
  std::string failure;
  if (p > 1 && std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
    const int w = std::uniform_int_distribution<int>(0, p - 1)(rng);
    const int at_ms = std::uniform_int_distribution<int>(0, real_clock ? 300 : 500)(rng);
    o.fail = fmt::format("w{}:{}@{}ms", w, pick(std::string("crash"), std::string("hang")), at_ms);
    o.worker_timeout_s = real_clock ? 0.3 : 0.2;
    failure = fmt::format(" --fail '{}' --worker-timeout {}s", o.fail, o.worker_timeout_s);
  }
  std::string where;
  if (real_clock) {
    o.time_s = 2.0;  // a bound: the iterations should end the run well before
    o.server = rule == "async" ? pick(ServerPlacement::kInline, ServerPlacement::kThread,
                                      ServerPlacement::kHogwild)
                               : pick(ServerPlacement::kInline, ServerPlacement::kThread);
    where = fmt::format(" --server {}", to_string(o.server));
  } else {
    o.clock = ClockKind::kVirtual;
    o.compute_time_s = pick(0.0, 0.001);
    where = fmt::format(" --clock virtual --compute-time {}s", o.compute_time_s);
  }
  const Cell c{o, fmt::format("--rule {} --workers {}{}{} --delay '{}' --delay-mode {} --seed {} "
                              "--iterations {}{}{}",
                              rule, p, k ? fmt::format(" --k {}", k) : std::string(), bound, delay,
                              to_string(o.delay_mode), o.seed, o.iterations, where, failure)};
  return c;
}

// The invariants every run keeps, whatever the rule (docs/rules.md).
void check(const Cell& cell, const RunRecord& run, double seconds) {
  INFO(cell.text);
  const TrainerOptions& o = cell.options;
  const ResolvedRun resolved = resolve_ok(o);
  const int k = resolved.rule().k;
  const bool synchronous = resolved.rule().synchronous();
  REQUIRE(run.stop_reason != StopReason::kDiverged);
  REQUIRE(run.stop_reason != StopReason::kFailed);
  // Termination: the iteration budget, on the real clock at worst the time bound, or a
  // failed worker that leaves the rule too few (never a hang, never another reason).
  const bool failures = o.fail != "none";
  const bool failed_out = failures && run.stop_reason == StopReason::kWorkersFailed;
  INFO("stop: " << to_string(run.stop_reason) << " " << run.stop_message);
  if (o.clock == ClockKind::kVirtual) {
    CHECK((run.stop_reason == StopReason::kIterations || failed_out));
  } else {
    CHECK((run.stop_reason == StopReason::kIterations || run.stop_reason == StopReason::kTime ||
           failed_out));
    CHECK(seconds < o.time_s + 30.0);  // a hang guard with a generous margin, not a timing
  }
  // Updates numbered 1..N, N within the budget, and in time order where one server applies
  // them (Hogwild!'s updates overlap: each is timed when its write ends, so a later-numbered
  // one may end first; docs/outputs.md).
  REQUIRE(run.updates.size() <= o.iterations);
  const bool ordered = o.server != ServerPlacement::kHogwild;
  for (std::size_t i = 0; i < run.updates.size(); ++i) {
    REQUIRE(run.updates[i].iteration == i + 1);
    if (i > 0 && ordered) CHECK(run.updates[i].wall_s >= run.updates[i - 1].wall_s);
  }
  const auto rounds = by_update(run);
  CHECK(rounds.size() == run.updates.size());
  for (const auto& u : run.updates) {
    const auto it = rounds.find(u.iteration);
    REQUIRE(it != rounds.end());
    const auto& gs = it->second;
    CHECK(static_cast<int>(gs.size()) == u.n_grads);
    // Sync's K follows the live workers once one has failed; every other rule keeps K.
    if (failures && o.rule.name == "sync") {
      CHECK(u.n_grads <= k);
    } else {
      CHECK(u.n_grads == k);
    }
    std::uint64_t max_st = 0;
    for (const auto& g : gs) {
      CHECK(g.computed_on < g.iteration);
      CHECK(g.staleness == g.iteration - 1 - g.computed_on);
      if (synchronous) CHECK(g.staleness == 0);
      max_st = std::max(max_st, g.staleness);
    }
    CHECK(u.max_staleness == max_st);
    // k-sync and k-async take K distinct workers; the batch rules may repeat one.
    if (o.rule.name == "sync" || o.rule.name == "k-sync" || o.rule.name == "k-async") {
      CHECK(distinct_workers(gs));
    }
  }
  // Counts: what was applied is what the records hold; nothing applied that was not pushed,
  // nothing pushed that was not started.
  REQUIRE(static_cast<int>(run.workers.size()) == o.workers);
  std::uint64_t applied = 0;
  for (const auto& w : run.workers) {
    CHECK(w.applied <= w.pushed);
    CHECK(w.pushed <= w.started);
    CHECK(w.cancelled <= w.started);
    applied += w.applied;
    if (!failures) CHECK_FALSE(w.failed);
  }
  CHECK(applied == run.gradients.size());
  // SSP: each pusher at most s + 1 gradients ahead of the slowest live worker (docs/rules.md,
  // "SSP"); a failed worker is live until the server learned of it.
  if (resolved.rule().rule == "ssp") {
    std::vector<std::uint64_t> pushed(run.workers.size(), 0);
    for (const auto& g : run.gradients) {
      const double at = run.updates[g.iteration - 1].wall_s;
      const auto mine = ++pushed[static_cast<std::size_t>(g.worker)];
      std::uint64_t slowest = mine;
      for (const auto& w : run.workers) {
        if (!w.failed || at < w.failed_at_s) {
          slowest = std::min(slowest, pushed[static_cast<std::size_t>(w.worker)]);
        }
      }
      CHECK(mine - slowest <=
            static_cast<std::uint64_t>(o.rule.params.integer("staleness-bound", 0)) + 1);
    }
  }
  // A worker recorded as failed computes nothing on a version published after the server
  // learned of it: it was never started again (a gradient it pushed before may still complete
  // a later round). Hogwild! has no server: its workers stop on their own.
  for (const auto& w : run.workers) {
    if (!w.failed || o.server == ServerPlacement::kHogwild) continue;
    for (const auto& g : run.gradients) {
      if (g.worker != w.worker || g.computed_on == 0) continue;
      CHECK(run.updates[g.computed_on - 1].wall_s <= w.failed_at_s);
    }
  }
}

int cells_from_env(int fallback) {
  const char* env = std::getenv("STALESGD_STRESS_CELLS");
  return env != nullptr ? std::max(1, std::atoi(env)) : fallback;
}

// Draws `cells` cells from `seed` and checks each.
void run_cells(std::uint64_t seed, int cells, bool real_clock) {
  std::mt19937_64 rng(seed);
  for (int i = 0; i < cells; ++i) {
    const Cell cell = draw(rng, real_clock);
    const auto t0 = std::chrono::steady_clock::now();
    auto run = train(cell.options, mnist());
    INFO("cell " << i << ": " << cell.text);
    INFO((run.ok() ? std::string() : run.error().message));
    REQUIRE(run.ok());
    check(cell, *run, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
}

}  // namespace

TEST_CASE("stress: random cells on the virtual clock keep the rule invariants", "[stress]") {
  // The virtual clock runs the rules on one thread: under ThreadSanitizer a third of the cells
  // check the threads around it; the plain and ASan suites check all 60 cells' rule logic.
  run_cells(20261130, cells_from_env(kThreadSanitized ? 20 : 60), /*real_clock=*/false);
}

TEST_CASE("stress: random cells on real threads keep the rule invariants and end", "[stress]") {
  run_cells(20261201, cells_from_env(60) / 3, /*real_clock=*/true);
}
