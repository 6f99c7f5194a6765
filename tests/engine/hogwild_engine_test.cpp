// The Hogwild! engine (--server hogwild): update numbering and staleness from what it records,
// accuracy against the inline parameter server, the time budget and divergence.
#include <catch2/catch.hpp>

#include <cmath>
#include <regex>

#include "engine/engine_test_util.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

namespace {

TrainerOptions hogwild_options(int workers, const std::string& delay) {
  auto o = quick_options("async", workers, 0, delay);
  o.server = ServerPlacement::kHogwild;
  return o;
}

// Updates and gradients number 1..N, each exactly once, and every gradient's staleness is
// (iteration - 1) - computed_on; one gradient per update. Returns N.
std::uint64_t check_numbering(const RunRecord& run) {
  REQUIRE(run.updates.size() == run.gradients.size());
  for (std::size_t i = 0; i < run.updates.size(); ++i) {
    const auto& u = run.updates[i];
    const auto& g = run.gradients[i];
    INFO("update " << i);
    REQUIRE(u.iteration == i + 1);
    REQUIRE(g.iteration == i + 1);
    CHECK(u.n_grads == 1);
    REQUIRE(g.computed_on < g.iteration);
    CHECK(g.staleness == g.iteration - 1 - g.computed_on);
    CHECK(u.max_staleness == g.staleness);
    CHECK(u.mean_staleness == static_cast<double>(g.staleness));
  }
  return run.updates.size();
}

}  // namespace

TEST_CASE("hogwild: every iteration is applied once, with its staleness", "[engine][hogwild]") {
  for (const int p : {2, 4}) {
    INFO("P = " << p);
    auto o = hogwild_options(p, "exp:mean=1ms");
    o.iterations = 300;
    const auto run = run_ok(o);
    CHECK(run.stop_reason == StopReason::kIterations);
    CHECK(check_numbering(run) == 300);
    CHECK(total(run, &WorkerRecord::pushed) == 300);
    CHECK(total(run, &WorkerRecord::applied) == 300);
    CHECK(total(run, &WorkerRecord::cancelled) == 0);
    REQUIRE(run.workers.size() == static_cast<std::size_t>(p));
    std::map<int, std::uint64_t> per_worker;
    for (const auto& g : run.gradients) ++per_worker[g.worker];
    for (const auto& w : run.workers) {
      CHECK(per_worker[w.worker] == w.applied);
      CHECK(w.pushed == w.applied);
      CHECK(w.computed >= w.pushed);
      CHECK(w.started >= w.computed);
    }
    // P workers in flight: other workers' updates land while one computes.
    CHECK(staleness_stats(run).max > 0);
    CHECK(run.param_buffers == static_cast<std::size_t>(1 + p));
    REQUIRE(!run.final_params.empty());
    for (const float x : run.final_params) REQUIRE(std::isfinite(x));
  }
}

TEST_CASE("hogwild: as accurate as the inline server for the same gradients", "[engine][hogwild]") {
  auto o = hogwild_options(4, "exp:mean=1ms");
  o.iterations = 600;
  o.eval_test_samples = 0;  // the whole test split: the comparison is not sampling noise
  const auto hogwild = run_ok(o);
  o.server = ServerPlacement::kInline;
  const auto inline_server = run_ok(o);
  REQUIRE(hogwild.updates.size() == 600);
  REQUIRE(inline_server.updates.size() == 600);
  const double hog_error = hogwild.evals.back().test_error;
  const double inline_error = inline_server.evals.back().test_error;
  INFO("hogwild " << hog_error << ", inline " << inline_error);
  CHECK(hog_error < hogwild.evals.front().test_error);  // it learned
  CHECK(hog_error <= 1.10 * inline_error);
}

TEST_CASE("hogwild: a time budget stops the run with no gap in the updates", "[engine][hogwild]") {
  auto o = hogwild_options(4, "exp:mean=2ms");
  o.time_s = 0.3;
  const auto run = run_ok(o);
  CHECK(run.stop_reason == StopReason::kTime);
  // A stop by time may cut a claimed update: none may be missing from the records.
  const std::uint64_t n = check_numbering(run);
  CHECK(n > 0);
  CHECK(total(run, &WorkerRecord::applied) == n);
  for (const auto& w : run.workers) {
    CHECK(w.pushed == w.applied);
    CHECK(w.started - w.pushed <= 1);  // at most the minibatch in flight at the stop
    CHECK(w.busy_s > 0.0);
  }
  REQUIRE(!run.evals.empty());
  CHECK(run.evals.back().iteration == n);
}

TEST_CASE("hogwild: a huge learning rate diverges and names the iteration", "[engine][hogwild]") {
  auto o = hogwild_options(4, "none");
  o.lr = 1e38;
  o.iterations = 200;
  const auto run = run_ok(o);
  CHECK(run.stop_reason == StopReason::kDiverged);
  INFO(run.divergence);
  // A non-finite loss or, when a thread's timing lets it be seen first, a finite one past the
  // growth bound (docs/reliability.md); both name the iteration.
  std::smatch m;
  REQUIRE(std::regex_search(run.divergence, m,
                            std::regex("training diverged at iteration ([0-9]+): the minibatch "
                                       "loss of worker [0-3] became (-?nan|-?inf|[0-9.e+]+ "
                                       "\\(over 1000 times a uniform guess's loss\\))")));
  CHECK_THAT(run.divergence, Catch::Contains("learning rate 1e+38 is probably too large"));
  const auto named = std::stoull(m[1].str());
  // w_0 is finite: the first update cannot diverge. The named iteration is the one the
  // diverging gradient would have produced (updates in flight elsewhere may still land).
  CHECK(named >= 2);
  CHECK(named <= run.updates.size() + 1 + static_cast<std::size_t>(o.workers));
  CHECK(check_numbering(run) < 200);
}

TEST_CASE("hogwild: the dutta rule sees the distance to the current parameters",
          "[engine][hogwild]") {
  auto o = hogwild_options(4, "exp:mean=1ms");
  o.iterations = 200;
  o.lr_rule = "dutta:c=1e-9";  // min(c / ||w_j - w_tau||^2, lr): below lr whenever w moved
  const auto run = run_ok(o);
  check_numbering(run);
  bool capped = false;
  for (const auto& u : run.updates) {
    CHECK(u.lr <= o.lr);
    capped = capped || (u.max_staleness > 0 && u.lr < o.lr);
  }
  CHECK(capped);
}
