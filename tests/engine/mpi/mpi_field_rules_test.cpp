// The rules published since the paper on --engine mpi (docs/rules.md, "The field since 2018"),
// their semantics checked from the CSVs rank 0 writes, as tests/rules/ringmaster_test.cpp and
// tests/rules/rennala_test.cpp check them on threads and the virtual clock.
#include <set>

#include <catch2/catch.hpp>

#include "engine/mpi/mpi_test_util.hpp"
#include "rules/mindflayer_replay.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd::test;

namespace {

Run train_ok(int ranks, const std::string& args) {
  require_mpi();
  const TempDir out;
  const auto r = mpi_train(ranks, args + " --eval-samples 1000 --out " + out.path().string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return read_run(out.path());
}

}  // namespace

TEST_CASE("mpi: ringmaster applies no gradient R or more updates stale", "[engine][mpi]") {
  // 3 worker ranks x 2 threads, worker 0 ten times faster: the others come back stale.
  const auto run = train_ok(4,
                            "--workers-per-rank 2 --rule ringmaster --staleness-threshold 2 "
                            "--delay 'exp:mean=10ms;w0=exp:mean=1ms' --iterations 120");
  REQUIRE(run.updates.size() == 120);
  for (const auto& [it, gs] : run.by_update) {
    REQUIRE(gs.size() == 1);
    CHECK(gs[0].staleness < 2);
  }
  CHECK(run.total("cancelled") > 0);  // the ignored ones
}

TEST_CASE("mpi: rennala's updates are S fresh gradients, a fast worker several", "[engine][mpi]") {
  const std::string old_point = GENERATE("discard", "interrupt");
  INFO("--old-point " << old_point);
  // S = 6 > P = 4.
  const auto run =
      train_ok(3, "--workers-per-rank 2 --rule rennala --k 6 --old-point " + old_point +
                      " --delay 'const:20ms;w0=const:2ms' --iterations 20");
  REQUIRE(run.updates.size() == 20);
  bool repeated = false;
  for (const auto& [it, gs] : run.by_update) {
    CHECK(gs.size() == 6);
    for (const auto& g : gs) CHECK(g.staleness == 0);
    repeated = repeated || !distinct_workers(gs);
  }
  CHECK(repeated);
  CHECK(run.total("cancelled") > 0);
}

TEST_CASE("mpi: malenia's updates hold every worker's fresh gradients", "[engine][mpi]") {
  const auto run = train_ok(3,
                            "--workers-per-rank 2 --rule malenia --k 8 --partition by-class "
                            "--delay 'const:20ms;w0=const:2ms' --iterations 15");
  REQUIRE(run.updates.size() == 15);
  for (const auto& [it, gs] : run.by_update) {
    std::set<long> from;
    for (const auto& g : gs) {
      CHECK(g.staleness == 0);
      from.insert(g.worker);
    }
    CHECK(from.size() == 4);
  }
}

TEST_CASE("mpi: mindflayer keeps exactly the attempts within each worker's limit",
          "[engine][mpi]") {
  // Rank 0 draws every attempt, as the thread engine does: the rounds replay from the streams.
  const auto run = train_ok(3,
                            "--workers-per-rank 2 --rule mindflayer --k 2 --delay exp:mean=10ms "
                            "--time-limit '8ms;w1=2ms;w2-3=4ms' --iterations 20");
  REQUIRE(run.updates.size() == 20);
  const auto kept = mindflayer_kept("exp:mean=10ms", 1, {0.008, 0.002, 0.004, 0.004}, 2, 20);
  std::map<std::pair<std::uint64_t, int>, int> recorded;
  for (const auto& [it, gs] : run.by_update) {
    for (const auto& g : gs) {
      ++recorded[{static_cast<std::uint64_t>(it), static_cast<int>(g.worker)}];
      CHECK(g.staleness == 0);
    }
  }
  CHECK(recorded == kept);
  CHECK(run.total("cancelled") > 0);  // the abandoned attempts' pushes
}

TEST_CASE("mpi: ringmaster --old-point interrupt stops computations R stale: every push applied",
          "[engine][mpi]") {
  const auto run = train_ok(4,
                            "--workers-per-rank 2 --rule ringmaster --staleness-threshold 2 "
                            "--old-point interrupt --delay 'exp:mean=10ms;w0=exp:mean=1ms' "
                            "--iterations 120");
  REQUIRE(run.updates.size() == 120);
  for (const auto& [it, gs] : run.by_update) CHECK(gs[0].staleness < 2);
  for (const auto& w : run.workers) CHECK(num(w, "pushed") == num(w, "applied"));
  CHECK(run.total("cancelled") > 0);  // the stopped computations
}

TEST_CASE("mpi: a FedBuff client's job is its Q local steps, taking Q minibatches' delays",
          "[engine][mpi][local_steps]") {
  const auto run = train_ok(3,
                            "--rule fedbuff --k 2 --local-steps 3 --local-lr 0.05 --lr 1 "
                            "--delay const:10ms --iterations 20");
  CHECK(run.updates.size() == 20);
  std::size_t gradients = 0;
  for (const auto& [it, gs] : run.by_update) {
    // Three 10 ms minibatches a job (pad mode: the job ends at its delay, compute inside it).
    for (const auto& g : gs) CHECK(g.duration_s >= 0.029);
    gradients += gs.size();
  }
  CHECK(gradients >= 40);
}
