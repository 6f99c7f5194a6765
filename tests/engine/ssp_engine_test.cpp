// SSP and backup workers on the engines (docs/rules.md, "Baselines"): the staleness bound
// asserted from the recorded gradients on the virtual clock and on real threads, what the bound
// costs per iteration, failed workers, and backup = k-sync with K = P - b update for update.
#include <algorithm>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "engine/engine_test_util.hpp"
#include "output/run_writer.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

namespace {

// A strong straggler: worker 0 is eight times slower than the others.
constexpr const char* kStraggler = "exp:mean=5ms;w0=x8";

TrainerOptions ssp_options(int workers, std::int64_t s, const std::string& delay) {
  auto o = quick_options("ssp", workers, 0, delay);
  o.rule.params.set("staleness-bound", std::int64_t{s});
  return o;
}

// The largest lead, over every update, of the pushing worker's count of gradients (this one
// included) over the slowest live worker's, replayed from the gradients in update order. A
// worker counts as live until the time the server learned of its failure.
std::uint64_t max_lead(const RunRecord& run) {
  std::vector<std::uint64_t> pushed(run.workers.size(), 0);
  std::uint64_t lead = 0;
  for (const auto& g : run.gradients) {
    const double at = run.updates[g.iteration - 1].wall_s;
    const auto mine = ++pushed[static_cast<std::size_t>(g.worker)];
    std::uint64_t slowest = std::numeric_limits<std::uint64_t>::max();
    for (std::size_t w = 0; w < pushed.size(); ++w) {
      const auto& rec = run.workers[w];
      if (!rec.failed || at < rec.failed_at_s) slowest = std::min(slowest, pushed[w]);
    }
    lead = std::max(lead, mine - slowest);
  }
  return lead;
}

}  // namespace

TEST_CASE("ssp virtual: the pusher is never more than s + 1 gradients ahead of the slowest",
          "[engine][virtual][ssp]") {
  const std::int64_t s = GENERATE(0, 2);
  INFO("s = " << s);
  auto o = ssp_options(4, s, kStraggler);
  o.clock = ClockKind::kVirtual;
  o.iterations = 400;
  const auto run = run_ok(o);
  REQUIRE(run.updates.size() == 400);
  for (const auto& u : run.updates) CHECK(u.n_grads == 1);  // every gradient is an update
  // The straggler holds the others back, so the bound is reached, never passed.
  CHECK(max_lead(run) == static_cast<std::uint64_t>(s) + 1);
  // Held workers wait for the straggler: each of them pushes about as often as it does.
  CHECK(run.workers[1].pushed <= run.workers[0].pushed + static_cast<std::uint64_t>(s) + 1);
  CHECK(run.workers[1].idle_s > 0.0);
  CHECK(total(run, &WorkerRecord::cancelled) == 0);
  // Without the gate the fast workers run far ahead.
  o.rule = {"async", 0};
  CHECK(max_lead(run_ok(o)) > 20);
}

TEST_CASE("ssp threads: the pusher is never more than s + 1 gradients ahead of the slowest",
          "[engine][threads][ssp]") {
  const std::int64_t s = GENERATE(0, 2);
  auto o = ssp_options(4, s, kStraggler);
  o.server = GENERATE(ServerPlacement::kInline, ServerPlacement::kThread);
  INFO("s = " << s << ", --server " << to_string(o.server));
  o.iterations = 60;
  const auto run = run_ok(o);
  REQUIRE(run.updates.size() == 60);
  CHECK(max_lead(run) <= static_cast<std::uint64_t>(s) + 1);
  CHECK(max_lead(run) >= 1);
  CHECK(total(run, &WorkerRecord::cancelled) == 0);
}

TEST_CASE("ssp virtual: the bound costs iterations, a straggler sets the pace",
          "[engine][virtual][ssp]") {
  // Updates in 3 s of virtual time: async runs at the fast workers' pace, SSP at the
  // straggler's (each of its gradients lets the others push about one each).
  auto updates = [](const std::string& rule, std::int64_t s) {
    auto o = ssp_options(4, s, kStraggler);
    o.rule = {rule, 0, {}};
    if (s >= 0) o.rule.params.set("staleness-bound", s);
    o.clock = ClockKind::kVirtual;
    o.time_s = 3.0;
    return run_ok(o).updates.size();
  };
  const auto async = updates("async", -1);
  const auto s0 = updates("ssp", 0);
  const auto s2 = updates("ssp", 2);
  INFO("async " << async << ", ssp s=0 " << s0 << ", s=2 " << s2);
  // async: 3 / 5 ms + 1 / 40 ms = 0.625 per ms; ssp: about 4 / 40 ms = 0.1 per ms.
  CHECK(s0 * 4 < async);
  CHECK(s2 * 4 < async);
  // A huge bound never holds anyone: async, update for update.
  CHECK(updates("ssp", 1'000'000'000) == async);
}

TEST_CASE("ssp virtual: a crashed straggler no longer holds the others back",
          "[engine][virtual][ssp][failures]") {
  auto o = ssp_options(4, 0, kStraggler);
  o.clock = ClockKind::kVirtual;
  o.fail = "w0:crash@500ms";
  o.time_s = 1.5;
  const auto run = run_ok(o);
  CHECK(run.stop_reason == StopReason::kTime);
  REQUIRE(run.workers[0].failed);
  CHECK(max_lead(run) == 1);
  // After the crash the three fast workers run lock-step at their own pace.
  std::size_t after = 0;
  for (const auto& u : run.updates) after += u.wall_s > 0.5;
  CHECK(after > 200);  // 3 workers, E[max of 3 exp(5 ms)] ~ 9 ms a round: ~330
}

TEST_CASE("backup: --rule backup --backups b is k-sync with K = P - b, byte for byte",
          "[engine][virtual][backup]") {
  auto o = quick_options("backup", 6, 0, "exp:mean=10ms;w5=x4");
  o.rule.params.set("backups", std::int64_t{2});
  o.clock = ClockKind::kVirtual;
  o.iterations = 100;
  TempDir a, b;
  const auto backup = resolve_ok(o);
  CHECK(backup.rule().rule == "backup");  // k-sync's state machine under its own name
  CHECK(backup.rule().k == 4);
  REQUIRE(write_run_outputs(a.path(), backup, run_ok(o), std::nullopt).ok());
  auto k = o;
  k.rule = {"k-sync", 4};
  const auto ksync = resolve_ok(k);
  REQUIRE(write_run_outputs(b.path(), ksync, run_ok(k), std::nullopt).ok());
  for (const char* f : {"updates.csv", "gradients.csv", "workers.csv"}) {
    INFO(f);
    CHECK(slurp(a / f).size() > 100);
    CHECK(slurp(a / f) == slurp(b / f));
  }
  // The summary keeps the name the user gave, and the K it means.
  std::ifstream in(a / "summary.json");
  const auto summary = nlohmann::json::parse(in);
  CHECK(summary["config"]["rule"] == "backup");
  CHECK(summary["config"]["backups"] == 2);
  CHECK(summary["config"]["k"] == 4);
  CHECK_FALSE(summary["config"].contains("staleness_bound"));
}

TEST_CASE("ssp: --server hogwild refuses it with one line", "[engine][ssp]") {
  auto o = ssp_options(4, 1, "none");
  o.server = ServerPlacement::kHogwild;
  o.iterations = 10;
  const auto r = ResolvedRun::resolve(o);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().message, Catch::Contains("no server to collect gradients or hold a worker "
                                                "back, so it runs --rule async only, not ssp"));
}
