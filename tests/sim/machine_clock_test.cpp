// The machine model on the discrete-event clock (sim/machine_clock.cpp, docs/machine.md), through
// the Monte Carlo that runs it: processor-shared cores, a server that takes time per gradient
// and per update, shards, links; each against the arithmetic of a case simple enough to solve
// by hand.
#include <catch2/catch.hpp>

#include "stalesgd/machine/machine.hpp"
#include "stalesgd/theory/runtime.hpp"

using namespace stalesgd;

namespace {

// Seconds per update of `rule` with K, P workers, no delay, C = 1 ms, on `m`.
double seconds(const std::string& rule, int workers, int k, const Machine& m) {
  auto profile = StragglerProfile::parse("none", workers);
  REQUIRE(profile.ok());
  auto mc = monte_carlo_runtime({rule, workers, k}, *profile, 4000, 1, DelayMode::kPad, 1e-3, m);
  REQUIRE(mc.ok());
  return mc->seconds;
}

Machine cores(int n) {
  Machine m;
  m.cores = n;
  return m;
}

}  // namespace

TEST_CASE("machine: workers share the cores, each at N / A of one", "[sim][machine]") {
  // 2 workers on 1 core: each gradient takes 2 ms, one update per ms.
  CHECK(seconds("async", 2, 1, cores(1)) == Approx(1e-3).epsilon(1e-9));
  CHECK(seconds("async", 4, 1, cores(2)) == Approx(0.5e-3).epsilon(1e-9));
  // Enough cores: C alone, P gradients per ms.
  CHECK(seconds("async", 4, 1, cores(8)) == Approx(0.25e-3).epsilon(1e-9));
  // sync: a round is every worker's gradient, 4 on 2 cores: 2 ms.
  CHECK(seconds("sync", 4, 4, cores(2)) == Approx(2e-3).epsilon(1e-9));
}

TEST_CASE("machine: one server takes gradients in one at a time, then applies", "[sim][machine]") {
  Machine m;
  m.server_gradient_s = 0.25e-3;
  m.server_update_s = 0.25e-3;
  // async, 8 workers deliver 8000 gradients/s; the server takes 0.5 ms for each: 2000/s.
  CHECK(seconds("async", 8, 1, m) == Approx(0.5e-3).epsilon(1e-9));
  // k-async K = 4: 4 gradients and an update, 1.25 ms, per update.
  CHECK(seconds("k-async", 8, 4, m) == Approx(1.25e-3).epsilon(1e-9));
  // 2 shards, each half the work: twice the updates.
  m.shards = 2;
  CHECK(seconds("async", 8, 1, m) == Approx(0.25e-3).epsilon(1e-9));
  // Below saturation the workers set the pace: 1 worker, C + 0.25 ms + 0.25 ms.
  m.shards = 1;
  CHECK(seconds("async", 1, 1, m) == Approx(1.5e-3).epsilon(1e-9));
  // The server's work shares the cores too: 1 worker and the server on 1 core never overlap
  // here (the worker waits for its parameters), so 1 core changes nothing.
  m.cores = 1;
  CHECK(seconds("async", 1, 1, m) == Approx(1.5e-3).epsilon(1e-9));
}

TEST_CASE("machine: a link carries the parameters out and the gradient in", "[sim][machine]") {
  Machine m;
  m.link.latency_s = 1e-3;
  // sync P = 1: 1 ms out, C = 1 ms, 1 ms in.
  CHECK(seconds("sync", 1, 1, m) == Approx(3e-3).epsilon(1e-9));
  // 125,000 parameters are 4 Mbit: 4 ms each way at 1 Gbit/s.
  m.parameters = 125'000;
  m.link.bandwidth_bps = 1e9;
  CHECK(seconds("sync", 1, 1, m) == Approx(11e-3).epsilon(1e-9));
  // 4 workers: the server's side sends one message at a time, so the last of a round's 4
  // parameter messages leaves 16 ms after the first; sync's round waits for it.
  CHECK(seconds("sync", 4, 4, m) > 20e-3);
}

TEST_CASE("machine: a memory link's copies are work on the cores, the receiver's",
          "[sim][machine]") {
  Machine m;
  m.parameters = 125'000;  // 4 Mbit: a 1 ms copy at 4 Gbit/s
  m.link = {.latency_s = 0.1e-3, .bandwidth_bps = 4e9, .memory = true};
  // sync P = 1: latency, the worker's copy and C, latency, the server's copy.
  CHECK(seconds("sync", 1, 1, m) == Approx(3.2e-3).epsilon(1e-9));
  // async P = 2 on 1 core: all CPU work, 3 ms per gradient (2 copies, C), shares the core; the
  // latencies overlap the other worker's work.
  m.cores = 1;
  m.link.latency_s = 0.0;
  CHECK(seconds("async", 2, 1, m) == Approx(3e-3).epsilon(1e-9));
  // The same link as a network: the transfers leave the core to C, so one worker's compute
  // overlaps the other's 2 ms of transfers: a 3 ms cycle each, 1.5 ms per update.
  m.link.memory = false;
  CHECK(seconds("async", 2, 1, m) == Approx(1.5e-3).epsilon(1e-9));
}

TEST_CASE("machine: the default is the free machine, and its results are the old ones",
          "[sim][machine]") {
  CHECK(Machine{}.free());
  auto profile = StragglerProfile::parse("exp:mean=10ms", 8);
  REQUIRE(profile.ok());
  Machine sharded;  // shards alone: a free server has nothing to share
  sharded.shards = 4;
  REQUIRE(sharded.free());
  const auto plain = monte_carlo_runtime({"k-async", 8, 2}, *profile, 4000, 5);
  const auto with =
      monte_carlo_runtime({"k-async", 8, 2}, *profile, 4000, 5, DelayMode::kPad, 0.0, sharded);
  REQUIRE(plain.ok());
  REQUIRE(with.ok());
  CHECK(plain->seconds == with->seconds);
  CHECK(plain->mean_staleness == with->mean_staleness);
}
