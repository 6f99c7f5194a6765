// rennala (rules/rennala.cpp): S fresh gradients from any workers per update, old ones
// discarded (or, with --old-point interrupt, cut), by hand and from the gradients the thread
// engine and the virtual clock record; its bad input.
#include <catch2/catch.hpp>

#include "engine/engine_test_util.hpp"
#include "rules/rule_test_util.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

namespace {
std::unique_ptr<Rule> rennala(int workers, int s, const std::string& old_point = "") {
  RuleSpec spec{"rennala", s};
  if (!old_point.empty()) spec.params.set("old-point", old_point);
  auto config = resolve_rule(spec, workers);
  REQUIRE(config.ok());
  return make_rule(*config);
}
}  // namespace

TEST_CASE("rennala takes S gradients at the current point from any workers", "[rules]") {
  auto r = rennala(2, 3);  // S > P: a fast worker gives several
  CHECK(r->synchronous());
  CHECK(push(*r, 0, 4, 4).next == AfterPush::kContinue);
  CHECK_FALSE(push(*r, 0, 4, 4).apply);
  const auto update = push(*r, 1, 4, 4);
  CHECK(update.apply);
  CHECK_FALSE(update.cancel_in_flight);  // as published: the old work runs on, then is discarded
  const auto old = push(*r, 1, 4, 5);
  CHECK_FALSE(old.accept);
  CHECK(old.next == AfterPush::kContinue);
  auto cut = rennala(2, 1, "interrupt");
  CHECK(push(*cut, 0, 0, 0).cancel_in_flight);
}

TEST_CASE("rennala on threads and the virtual clock: every update is S fresh gradients",
          "[rules][engine]") {
  const auto clock = GENERATE(ClockKind::kReal, ClockKind::kVirtual);
  const std::string old_point = GENERATE("discard", "interrupt");
  INFO("clock " << (clock == ClockKind::kVirtual ? "virtual" : "real") << ", --old-point "
                << old_point);
  // S = 6 > P = 4; worker 0 ten times faster than the rest.
  auto o = quick_options("rennala", 4, 6, "const:20ms;w0=const:2ms");
  o.rule.params.set("old-point", std::string(old_point));
  o.clock = clock;
  o.iterations = 30;
  const auto run = run_ok(o);
  CHECK(run.updates.size() == 30);
  bool repeated = false;
  for (const auto& [it, gs] : by_update(run)) {
    CHECK(gs.size() == 6);
    for (const auto& g : gs) CHECK(g.staleness == 0);
    repeated = repeated || !distinct_workers(gs);
  }
  CHECK(repeated);
  // The slow workers' gradients were computed at points the fast one moved past.
  CHECK(total(run, &WorkerRecord::cancelled) > 0);
  // Worker 0 gives S = 6 gradients in 12 ms, so a 20 ms minibatch always ends at a point an
  // update has left: only worker 0's gradients are applied (on the virtual clock; on threads
  // under a sanitizer worker 0's compute may stretch a round past 20 ms). Discarded, a slow
  // worker's work runs to its end at the point it began on and reaches the server, where it is
  // dropped; cut, it does not.
  for (const auto& w : run.workers) {
    INFO("worker " << w.worker);
    if (w.worker == 0) continue;
    if (clock == ClockKind::kVirtual) CHECK(w.applied == 0);
    if (old_point == "discard") {
      CHECK(w.pushed > 0);
      CHECK(w.started <= w.pushed + 1);
    }
  }
}

TEST_CASE("rennala: a missing or bad S or --old-point is one line and exit 2", "[rules][cli]") {
  check_bad_train_flags({
      {{"--rule", "rennala"}, "needs --k S"},
      {{"--rule", "rennala", "--k", "0"}, "--k"},
      {{"--rule", "rennala", "--k", "2", "--old-point", "keep"}, "discard or interrupt"},
      {{"--rule", "k-sync", "--k", "2", "--old-point", "discard"}, "rennala and ringmaster only"},
  });
}

TEST_CASE("rennala on threads discards the old-point work the virtual clock does",
          "[rules][engine]") {
  // Fixed heterogeneous speeds: which minibatches end at an old point is set by the delays, so
  // the threads' count matches the virtual clock's up to timer jitter. A server that pinned a
  // held-back worker's version at its late release made that work fresh: half the discards.
  auto o = quick_options("rennala", 4, 6,
                         "const:20ms;w0=const:20ms;w1=const:40ms;w2=const:60ms;w3=const:80ms");
  o.iterations = 20;
  const auto threads = total(run_ok(o), &WorkerRecord::cancelled);
  o.clock = ClockKind::kVirtual;
  const auto virtual_clock = total(run_ok(o), &WorkerRecord::cancelled);
  INFO("threads " << threads << ", virtual " << virtual_clock);
  REQUIRE(virtual_clock > 20);
  CHECK(threads >= virtual_clock * 4 / 5);
  CHECK(threads <= virtual_clock * 5 / 4);
}
