// Failed workers on the virtual clock (docs/rules.md, "Failed workers"): exact, repeatable
// crashes and hangs, what each rule does, and what the records say.
#include <fstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "engine/engine_test_util.hpp"
#include "output/run_writer.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

namespace {

TrainerOptions virtual_options(const std::string& rule, int workers, int k,
                               const std::string& delay, const std::string& fail) {
  auto o = quick_options(rule, workers, k, delay);
  o.clock = ClockKind::kVirtual;
  o.fail = fail;
  return o;
}

}  // namespace

TEST_CASE("virtual failures: async runs on without a crashed worker",
          "[engine][virtual][failures]") {
  auto o = virtual_options("async", 4, 0, "exp:mean=10ms", "w1:crash@200ms");
  o.time_s = 1.0;
  const auto run = run_ok(o);
  CHECK(run.stop_reason == StopReason::kTime);
  CHECK(run.stop_message.empty());
  const auto& w1 = run.workers[1];
  CHECK(w1.failed);
  CHECK(w1.failure == "crash");
  CHECK(w1.failed_at_s == 0.2);
  CHECK(w1.pushed > 0);
  CHECK(last_update_with(run, 1) <= 0.2);
  for (int w : {0, 2, 3}) {
    CHECK_FALSE(run.workers[static_cast<std::size_t>(w)].failed);
    CHECK(last_update_with(run, w) > 0.9);
  }
  // Its counts stopped: about a fifth of another worker's.
  CHECK(w1.applied * 3 < run.workers[0].applied);
  CHECK(run.updates.back().wall_s > 0.9);

  TempDir dir;
  const auto resolved = resolve_ok(o);
  REQUIRE(write_run_outputs(dir.path(), resolved, run, std::nullopt).ok());
  std::ifstream csv(dir / "workers.csv");
  std::string header, row0, row1;
  std::getline(csv, header);
  std::getline(csv, row0);
  std::getline(csv, row1);
  CHECK(
      header ==
      "worker,started,computed,pushed,applied,cancelled,busy_s,idle_s,failed,failed_at_s,failure");
  CHECK_THAT(row0, Catch::EndsWith(",0,0.000000,"));
  CHECK_THAT(row1, Catch::StartsWith("1,") && Catch::EndsWith(",1,0.200000,crash"));
  std::ifstream in(dir / "summary.json");
  const auto j = nlohmann::json::parse(in);
  CHECK(j["failures"] == nlohmann::json::parse(R"([{"worker": 1, "at_s": 0.2, "how": "crash"}])"));
  CHECK(j["config"]["fail"] == "w1:crash@200ms");
  CHECK(j["config"]["worker_timeout"] == 10.0);
  CHECK_FALSE(j.contains("stop_message"));
}

TEST_CASE("virtual failures: sync runs on with K = the live workers",
          "[engine][virtual][failures]") {
  auto o = virtual_options("sync", 4, 0, "exp:mean=10ms", "w2:crash@200ms");
  o.time_s = 1.0;
  const auto run = run_ok(o);
  CHECK(run.stop_reason == StopReason::kTime);
  CHECK(run.workers[2].failed);
  // Every round before the crash had all four; the one under way at 0.2 s holds 4 if worker 2
  // had delivered, else 3; every later one has the three live workers.
  std::size_t after = 0;
  bool under_way = true;
  for (const auto& [it, gs] : by_update(run)) {
    const auto& u = run.updates[it - 1];
    if (u.wall_s < 0.2) {
      CHECK(u.n_grads == 4);
      continue;
    }
    CHECK(distinct_workers(gs));
    if (std::exchange(under_way, false)) continue;
    ++after;
    CHECK(u.n_grads == 3);
    for (const auto& g : gs) CHECK(g.worker != 2);
  }
  CHECK(after > 10);
}

TEST_CASE("virtual failures: k-sync with K = P stops at the first crash naming it",
          "[engine][virtual][failures]") {
  auto o = virtual_options("k-sync", 4, 4, "exp:mean=10ms", "w1:crash@200ms");
  o.time_s = 1.0;
  const auto run = run_ok(o);
  CHECK(run.stop_reason == StopReason::kWorkersFailed);
  CHECK(run.wall_s == 0.2);
  CHECK(run.stop_message ==
        "worker 1 failed (w1 crashed at 0.200 s); k-sync needs K = 4 live workers and 3 of 4 are "
        "left: lower --k to 3 or less to run on without them");
  CHECK(run.updates.back().wall_s <= 0.2);
  CHECK(run.evals.back().wall_s == 0.2);  // the final snapshot at the stop
}

TEST_CASE("virtual failures: k-async stops when fewer than K workers are left",
          "[engine][virtual][failures]") {
  auto o = virtual_options("k-async", 4, 3, "exp:mean=10ms", "w0:crash@100ms;w2:crash@300ms");
  o.time_s = 1.0;
  const auto run = run_ok(o);
  CHECK(run.stop_reason == StopReason::kWorkersFailed);
  CHECK(run.wall_s == 0.3);
  CHECK_THAT(run.stop_message,
             Contains("workers 0 and 2 failed (w0 crashed at 0.100 s, w2 crashed at 0.300 s); "
                      "k-async needs K = 3 live workers and 2 of 4 are left"));
}

TEST_CASE("virtual failures: a hang is found worker-timeout after its minibatch's end",
          "[engine][virtual][failures]") {
  auto o = virtual_options("sync", 3, 0, "const:10ms", "w0:hang@105ms");
  o.worker_timeout_s = 0.5;
  o.time_s = 1.0;
  const auto run = run_ok(o);
  CHECK(run.stop_reason == StopReason::kTime);
  const auto& w0 = run.workers[0];
  CHECK(w0.failed);
  CHECK(w0.failure == "hang");
  // Its minibatch from 0.10 s would have ended at 0.11 s: found at 0.61 s.
  CHECK(w0.failed_at_s == Approx(0.61));
  CHECK(last_update_with(run, 0) <= 0.105);
  // Sync waited for it: no update in the timeout, then rounds of the two others.
  double gap = 0.0;
  for (std::size_t i = 1; i < run.updates.size(); ++i) {
    gap = std::max(gap, run.updates[i].wall_s - run.updates[i - 1].wall_s);
  }
  CHECK(gap >= 0.5);
  CHECK(run.updates.back().n_grads == 2);
  CHECK(run.updates.back().wall_s > 0.9);
}

TEST_CASE("virtual failures: async with every worker hung stops when the last is found",
          "[engine][virtual][failures]") {
  auto o = virtual_options("async", 2, 0, "const:10ms", "w0:hang@55ms;w1:crash@100ms");
  o.worker_timeout_s = 0.2;
  o.time_s = 5.0;
  const auto run = run_ok(o);
  CHECK(run.stop_reason == StopReason::kWorkersFailed);
  CHECK(run.wall_s == Approx(0.26));
  CHECK(run.stop_message ==
        "all 2 workers failed (w1 crashed at 0.100 s, w0 hung (no gradient 200ms after its "
        "minibatch's end; found at 0.260 s)); async needs at least one live worker");
}

TEST_CASE("virtual failures: a hung worker is found although k-sync cuts its minibatch",
          "[engine][virtual][failures]") {
  // The updates come with 3 of 4 gradients and would cut the hung worker's minibatch every
  // round; hung, it hears neither the cut nor the next minibatch, so the one it hung in stays
  // due and is found --worker-timeout after its end. Before, it was started again each round
  // and never found.
  auto o = virtual_options("k-sync", 4, 3, "exp:mean=10ms", "w3:hang@100ms");
  o.worker_timeout_s = 0.05;
  o.time_s = 1.0;
  const auto run = run_ok(o);
  CHECK(run.stop_reason == StopReason::kTime);
  CHECK(run.updates.back().wall_s > 0.9);
  CHECK(last_update_with(run, 3) <= 0.1);
  const auto& w3 = run.workers[3];
  REQUIRE(w3.failed);
  CHECK(w3.failure == "hang");
  // Its minibatch in flight at 0.1 s ends after it; found 0.05 s after that end.
  CHECK(w3.failed_at_s >= 0.15);
  CHECK(w3.failed_at_s < 0.5);
  // Started once per round until it hung, then never again: far fewer than a live worker.
  CHECK(w3.started * 5 < run.workers[0].started);
}

TEST_CASE("virtual failures: repeat byte for byte", "[engine][virtual][failures]") {
  auto o = virtual_options("k-batch-async", 4, 2, "exp:mean=10ms", "w1:crash@150ms;w2:hang@50ms");
  o.worker_timeout_s = 0.1;
  o.time_s = 0.5;
  const auto a = run_ok(o);
  const auto b = run_ok(o);
  CHECK(a.final_params == b.final_params);
  REQUIRE(a.workers.size() == b.workers.size());
  for (std::size_t w = 0; w < a.workers.size(); ++w) {
    CHECK(a.workers[w].failed_at_s == b.workers[w].failed_at_s);
    CHECK(a.workers[w].applied == b.workers[w].applied);
  }
  CHECK(a.workers[1].failed);
  CHECK(a.workers[2].failed);
}
