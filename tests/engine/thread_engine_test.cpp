// The real-thread engine: each rule's semantics checked from what the engine records, under
// real sleeps and real threads, with the server inline and on its own thread; P = 1 sync
// against the sequential reference; many workers.
#include "engine/engine_test_util.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

TEST_CASE("threads: k-sync updates hold K fresh gradients of K distinct workers",
          "[engine][threads]") {
  auto o = quick_options("k-sync", 6, 2, "exp:mean=2ms");
  o.server = GENERATE(ServerPlacement::kInline, ServerPlacement::kThread);
  INFO("--server " << to_string(o.server));
  o.iterations = 150;
  const auto run = run_ok(o);
  REQUIRE(run.updates.size() == 150);
  for (const auto& [it, gs] : by_update(run)) {
    CHECK(gs.size() == 2);
    CHECK(distinct_workers(gs));
    for (const auto& g : gs) CHECK(g.staleness == 0);
  }
  // Every round all P workers hold a minibatch on the round's version (the server assigns it
  // the moment a worker is free) and the P - K that do not make the cut lose it: exactly.
  CHECK(total(run, &WorkerRecord::cancelled) == 4u * 150u);
  CHECK(total(run, &WorkerRecord::applied) == 300);
}

TEST_CASE("threads: k-batch-sync takes K fresh gradients, a fast worker several",
          "[engine][threads]") {
  // Worker 0 is ten times faster than the rest: it delivers several minibatches per round.
  auto o = quick_options("k-batch-sync", 4, 4, "const:20ms;w0=const:2ms");
  o.server = GENERATE(ServerPlacement::kInline, ServerPlacement::kThread);
  INFO("--server " << to_string(o.server));
  o.iterations = 40;
  const auto run = run_ok(o);
  bool repeated = false;
  for (const auto& [it, gs] : by_update(run)) {
    CHECK(gs.size() == 4);
    for (const auto& g : gs) CHECK(g.staleness == 0);
    repeated = repeated || !distinct_workers(gs);
  }
  CHECK(repeated);
}

TEST_CASE("threads: k-async takes K distinct workers and stale gradients occur",
          "[engine][threads]") {
  auto o = quick_options("k-async", 8, 3, "exp:mean=2ms");
  o.server = GENERATE(ServerPlacement::kInline, ServerPlacement::kThread);
  INFO("--server " << to_string(o.server));
  o.iterations = 200;
  const auto run = run_ok(o);
  std::uint64_t stale = 0;
  for (const auto& [it, gs] : by_update(run)) {
    CHECK(gs.size() == 3);
    CHECK(distinct_workers(gs));
    for (const auto& g : gs) stale += g.staleness > 0;
  }
  CHECK(stale > 0);
  CHECK(total(run, &WorkerRecord::cancelled) == 0);
}

TEST_CASE("threads: k-batch-async takes any K gradients, repeated workers occur",
          "[engine][threads]") {
  auto o = quick_options("k-batch-async", 4, 4, "const:20ms;w0=const:2ms");
  o.server = GENERATE(ServerPlacement::kInline, ServerPlacement::kThread);
  INFO("--server " << to_string(o.server));
  o.iterations = 40;
  const auto run = run_ok(o);
  bool repeated = false;
  for (const auto& [it, gs] : by_update(run)) {
    CHECK(gs.size() == 4);
    repeated = repeated || !distinct_workers(gs);
  }
  CHECK(repeated);
  CHECK(total(run, &WorkerRecord::cancelled) == 0);
}

TEST_CASE("threads: async applies each gradient, with mean staleness near P - 1",
          "[engine][threads]") {
  // Delays long against compute (even under ThreadSanitizer), as the formula assumes.
  auto o = quick_options("async", 8, 0, "exp:mean=16ms");
  o.server = GENERATE(ServerPlacement::kInline, ServerPlacement::kThread);
  INFO("--server " << to_string(o.server));
  o.iterations = 1500;
  const auto run = run_ok(o);
  for (const auto& u : run.updates) CHECK(u.n_grads == 1);
  // With identical exponential delays every other worker pushes once, on average, while one
  // worker computes: E[staleness] = P - 1 = 7.
  const double mean = staleness_stats(run).mean;
  CHECK(mean == Approx(7.0).epsilon(0.12));
}

TEST_CASE("threads: sync waits for all P workers", "[engine][threads]") {
  auto o = quick_options("sync", 5, 0, "uniform:1ms..3ms");
  o.server = GENERATE(ServerPlacement::kInline, ServerPlacement::kThread);
  INFO("--server " << to_string(o.server));
  o.iterations = 50;
  const auto run = run_ok(o);
  for (const auto& [it, gs] : by_update(run)) {
    CHECK(gs.size() == 5);
    CHECK(distinct_workers(gs));
  }
  CHECK(total(run, &WorkerRecord::cancelled) == 0);
}

TEST_CASE("threads: P = 1 sync reproduces the sequential trainer bit for bit",
          "[engine][threads]") {
  auto o = quick_options("sync", 1, 0, "none");
  o.server = GENERATE(ServerPlacement::kInline, ServerPlacement::kThread);
  INFO("--server " << to_string(o.server));
  o.iterations = 300;
  o.lr = 0.1;
  const auto ps = run_ok(o);
  o.sequential = true;
  o.server = ServerPlacement::kInline;
  const auto seq = run_ok(o);
  REQUIRE(ps.final_params.size() == seq.final_params.size());
  CHECK(ps.final_params == seq.final_params);
  REQUIRE(ps.updates.size() == seq.updates.size());
  for (std::size_t i = 0; i < ps.updates.size(); ++i) {
    CHECK(ps.updates[i].minibatch_loss == seq.updates[i].minibatch_loss);
  }
}

TEST_CASE("threads: every rule with 64 workers and 1 ms delays finishes",
          "[engine][threads][stress]") {
  const auto server = GENERATE(ServerPlacement::kInline, ServerPlacement::kThread);
  INFO("--server " << to_string(server));
  for (const auto& [rule, k] : std::vector<std::pair<std::string, int>>{{"sync", 0},
                                                                        {"k-sync", 16},
                                                                        {"k-batch-sync", 16},
                                                                        {"async", 0},
                                                                        {"k-async", 16},
                                                                        {"k-batch-async", 16}}) {
    auto o = quick_options(rule, 64, k, "exp:mean=1ms");
    o.server = server;
    o.iterations = 60;
    INFO(rule);
    const auto run = run_ok(o);
    CHECK(run.updates.size() == 60);
    CHECK(run.stop_reason == StopReason::kIterations);
  }
}

TEST_CASE("threads: --time stops the run and workers account for their time", "[engine][threads]") {
  auto o = quick_options("k-async", 4, 2, "const:5ms");
  o.server = GENERATE(ServerPlacement::kInline, ServerPlacement::kThread);
  INFO("--server " << to_string(o.server));
  o.time_s = 0.3;
  const auto run = run_ok(o);
  CHECK(run.stop_reason == StopReason::kTime);
  CHECK(run.wall_s >= 0.3);
  CHECK(run.wall_s < 2.0);
  for (const auto& w : run.workers) {
    CHECK(w.busy_s > 0.0);
    CHECK(w.busy_s + w.idle_s <= run.wall_s + 0.05);
  }
}

TEST_CASE("threads: k-sync computes only the minibatches that can make the cut",
          "[engine][threads]") {
  // The server draws every X at the assignment, so it knows which K minibatches of a round end
  // first; the other P - K sleep until the update cuts them and compute nothing. That depends
  // on the draws only, not on timing: it holds on a loaded machine and under sanitizers.
  auto o = quick_options("k-sync", 16, 2, "exp:mean=5ms");
  o.server = GENERATE(ServerPlacement::kInline, ServerPlacement::kThread);
  INFO("--server " << to_string(o.server));
  o.iterations = 60;
  const auto run = run_ok(o);
  for (const auto& w : run.workers) {
    CHECK(w.computed >= w.pushed);
    CHECK(w.computed <= w.started);
  }
  CHECK(total(run, &WorkerRecord::pushed) >= 120);
  CHECK(total(run, &WorkerRecord::started) >= 16u * 60u);
  // At most the K released minibatches of the round in flight at the stop are not pushed.
  CHECK(total(run, &WorkerRecord::computed) <= total(run, &WorkerRecord::pushed) + 2);
}

TEST_CASE("threads: pad mode never ends a minibatch before its delay", "[engine][threads]") {
  // Sync with a constant 20 ms: every round lasts at least 20 ms, even though the workers
  // wake before X to compute (timed waits aim early by at most 0.3 ms).
  auto o = quick_options("sync", 2, 2, "const:20ms");
  o.server = GENERATE(ServerPlacement::kInline, ServerPlacement::kThread);
  INFO("--server " << to_string(o.server));
  o.iterations = 10;
  const auto run = run_ok(o);
  REQUIRE(run.updates.size() == 10);
  CHECK(run.updates.back().wall_s >= 10 * (0.020 - 0.0003));
}
