// The virtual-time engine: byte-identical repeats, the rules' exact bookkeeping on a
// deterministic clock, and staleness distributions that match the real-thread engine.
#include <algorithm>
#include <fstream>
#include <tuple>

#include <fmt/format.h>

#include "engine/engine_test_util.hpp"
#include "output/run_writer.hpp"
#include "stalesgd/util/seed.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

namespace {

TrainerOptions virtual_options(const std::string& rule, int workers, int k,
                               const std::string& delay) {
  auto o = quick_options(rule, workers, k, delay);
  o.clock = ClockKind::kVirtual;
  o.eval_every_s = 0.05;
  return o;
}

}  // namespace

TEST_CASE("virtual: two runs with the same seed write byte-identical files", "[engine][virtual]") {
  auto o = virtual_options("k-async", 8, 2, "shifted-exp:shift=2ms,mean=5ms;w3=x4");
  o.time_s = 0.5;
  TempDir a, b;
  const auto r1 = run_ok(o);
  const auto r2 = run_ok(o);
  const auto resolved = ResolvedRun::resolve(o);
  REQUIRE(resolved.ok());
  REQUIRE(write_run_outputs(a.path(), *resolved, r1, std::nullopt).ok());
  REQUIRE(write_run_outputs(b.path(), *resolved, r2, std::nullopt).ok());
  for (const char* f :
       {"updates.csv", "gradients.csv", "evals.csv", "workers.csv", "summary.json"}) {
    INFO(f);
    const auto x = slurp(a / f);
    CHECK(x.size() > 40);
    CHECK(x == slurp(b / f));
  }
  CHECK(r1.evals.size() == 11);  // t = 0, 0.05, ..., 0.45, and the end at 0.5
  CHECK(r1.wall_s == 0.5);
  o.seed = 2;
  CHECK(run_ok(o).final_params != r1.final_params);
}

TEST_CASE("virtual: evals record the L2 objective, train_loss + l2/2 |W|^2 of the weights",
          "[engine][virtual]") {
  auto o = virtual_options("k-async", 4, 2, "exp:mean=10ms");
  o.time_s = 0.3;
  o.model.l2 = 0.1f;
  const auto run = run_ok(o);
  REQUIRE(run.evals.size() >= 2);
  // l2/2 |W|^2 by hand: softmax's parameters are W (784 x 10), then the 10 biases (not counted).
  const auto penalty = [&](std::span<const float> w) {
    REQUIRE(w.size() == 784 * 10 + 10);
    double squares = 0.0;
    for (std::size_t i = 0; i < 784 * 10; ++i) squares += static_cast<double>(w[i]) * w[i];
    return 0.5 * 0.1 * squares;
  };
  // The iteration-0 snapshot holds the seeded initialisation, the last one the final weights.
  auto model = make_model(o.model, mnist().train.shape, mnist().num_classes);
  REQUIRE(model);
  std::vector<float> w0((*model)->num_params());
  (*model)->init_params(w0, derive_seed(o.seed, SeedStream::kModelInit));
  const auto& first = run.evals.front();
  const auto& last = run.evals.back();
  REQUIRE(first.iteration == 0);
  REQUIRE(last.iteration == run.updates.size());
  CHECK(first.train_objective - first.train_loss == Approx(penalty(w0)).epsilon(1e-5));
  CHECK(last.train_objective - last.train_loss == Approx(penalty(run.final_params)).epsilon(1e-5));
  CHECK(penalty(w0) > penalty(run.final_params));  // L2 pulls the weights in
  // evals.csv's train_objective column, as written (6 significant digits).
  TempDir dir;
  const auto resolved = ResolvedRun::resolve(o);
  REQUIRE(resolved.ok());
  REQUIRE(write_run_outputs(dir.path(), *resolved, run, std::nullopt).ok());
  std::ifstream in(dir / "evals.csv");
  std::string header, row;
  REQUIRE(std::getline(in, header));
  CHECK(header ==
        "wall_s,iteration,train_loss,test_loss,test_error,train_objective,val_loss,val_error,"
        "scored_s,test_samples,train_samples");
  REQUIRE(std::getline(in, row));
  // No --holdout: val_loss and val_error empty; scored at its own (virtual) time, on the
  // samples the run asked for.
  CHECK(first.test_samples == run.eval_test_samples);
  CHECK(first.train_samples == run.eval_train_samples);
  const std::string tail =
      fmt::format(",,,{:.6f},{},{}", first.wall_s, run.eval_test_samples, run.eval_train_samples);
  REQUIRE(row.ends_with(tail));
  const std::string objective = row.substr(0, row.size() - tail.size());
  const double written = std::stod(objective.substr(objective.rfind(',') + 1));
  CHECK(written == Approx(first.train_loss + penalty(w0)).epsilon(1e-5));

  // Without --l2 the objective is the training loss, row for row.
  o.model.l2 = 0.0f;
  for (const auto& e : run_ok(o).evals) CHECK(e.train_objective == e.train_loss);
}

TEST_CASE("virtual: sync is k-sync with K = P, update for update", "[engine][virtual]") {
  auto o = virtual_options("sync", 4, 0, "exp:mean=10ms");
  o.iterations = 60;
  const auto sync = run_ok(o);
  o.rule = {"k-sync", 4};
  const auto ksync = run_ok(o);
  CHECK(sync.final_params == ksync.final_params);
  REQUIRE(sync.updates.size() == ksync.updates.size());
  for (std::size_t i = 0; i < sync.updates.size(); ++i) {
    CHECK(sync.updates[i].wall_s == ksync.updates[i].wall_s);
    CHECK(sync.updates[i].n_grads == 4);
  }
}

TEST_CASE("virtual: k-sync cancels exactly P - K minibatches per update", "[engine][virtual]") {
  auto o = virtual_options("k-sync", 8, 3, "exp:mean=10ms");
  o.iterations = 100;
  const auto run = run_ok(o);
  CHECK(total(run, &WorkerRecord::cancelled) == 5u * 100u);
  for (const auto& [it, gs] : by_update(run)) {
    CHECK(gs.size() == 3);
    CHECK(distinct_workers(gs));
  }
}

TEST_CASE("virtual: k-batch-async per-iteration time is K E[X] / P", "[engine][virtual]") {
  auto o = virtual_options("k-batch-async", 8, 4, "exp:mean=10ms");
  o.iterations = 4000;
  o.eval_every_s = 1000.0;
  const auto run = run_ok(o);
  CHECK(seconds_per_iteration(run) == Approx(4 * 0.010 / 8).epsilon(0.05));
}

namespace {
// Two-sample Kolmogorov-Smirnov distance between the staleness samples of two runs.
double ks_distance(const RunRecord& a, const RunRecord& b) {
  auto values = [](const RunRecord& r) {
    std::vector<std::uint64_t> v;
    for (const auto& g : r.gradients) v.push_back(g.staleness);
    std::sort(v.begin(), v.end());
    return v;
  };
  const auto x = values(a), y = values(b);
  double d = 0.0;
  for (std::uint64_t s = 0; s <= std::max(x.back(), y.back()); ++s) {
    const double fx = double(std::upper_bound(x.begin(), x.end(), s) - x.begin()) / x.size();
    const double fy = double(std::upper_bound(y.begin(), y.end(), s) - y.begin()) / y.size();
    d = std::max(d, std::abs(fx - fy));
  }
  return d;
}
}  // namespace

TEST_CASE("virtual and real engines give matching staleness distributions",
          "[engine][virtual][threads]") {
  // Delays long against compute (even 15x slower under ThreadSanitizer), so that the real run
  // is delay-dominated as the virtual one (compute time 0) assumes.
  for (const auto& [rule, k, iterations] :
       std::vector<std::tuple<std::string, int, int>>{{"async", 0, 600}, {"k-async", 2, 300}}) {
    INFO(rule);
    auto o = quick_options(rule, 8, k, "exp:mean=30ms");
    o.iterations = static_cast<std::uint64_t>(iterations);
    const auto real = run_ok(o);
    o.clock = ClockKind::kVirtual;
    o.iterations = 6000;  // the virtual clock is cheap: a precise reference distribution
    const auto virt = run_ok(o);
    // 600 correlated samples against a precise reference: 0.1 is above sampling noise and far
    // below the distance to a wrong rule (async vs k-async differ by > 0.3).
    CHECK(ks_distance(real, virt) < 0.1);
    CHECK(staleness_stats(real).mean == Approx(staleness_stats(virt).mean).epsilon(0.1));
  }
}
