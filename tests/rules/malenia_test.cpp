// malenia (rules/malenia.cpp): every live worker's fresh gradients before an update, until the
// harmonic mean of their counts reaches S / P; by hand and from the gradients the thread engine
// and the virtual clock record on partitioned data; its bad input.
#include <catch2/catch.hpp>

#include <set>

#include "engine/engine_test_util.hpp"
#include "rules/rule_test_util.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

TEST_CASE("malenia waits for every worker and the harmonic mean of their counts", "[rules]") {
  auto r = rule("malenia", 3, 3);  // apply once sum_i 1/B_i <= 9 / 3
  CHECK(r->synchronous());
  CHECK(r->averages_per_worker());
  CHECK_FALSE(push(*r, 0, 0, 0).apply);
  CHECK_FALSE(push(*r, 0, 0, 0).apply);
  CHECK_FALSE(push(*r, 1, 0, 0).apply);  // worker 2 has given nothing
  const auto old = push(*r, 2, 9, 10);
  CHECK_FALSE(old.accept);                // an older point
  const auto update = push(*r, 2, 0, 0);  // B = (2, 1, 1): 1/2 + 1 + 1 = 2.5 <= 3
  CHECK(update.apply);
  CHECK_FALSE(update.cancel_in_flight);
  auto s6 = rule("malenia", 3, 6);  // sum 1/B_i <= 1.5: (1, 1, 1) is not enough, (2, 2, 2) is
  for (int w : {0, 1, 2}) CHECK_FALSE(push(*s6, w, 0, 0).apply);
  CHECK_FALSE(push(*s6, 0, 0, 0).apply);
  CHECK_FALSE(push(*s6, 1, 0, 0).apply);
  CHECK(push(*s6, 2, 0, 0).apply);
}

TEST_CASE("malenia on threads and the virtual clock: every worker contributes to every update",
          "[rules][engine]") {
  const auto clock = GENERATE(ClockKind::kReal, ClockKind::kVirtual);
  INFO("clock " << (clock == ClockKind::kVirtual ? "virtual" : "real"));
  // Worker 0 ten times faster; each worker holds about a quarter of the classes.
  auto o = quick_options("malenia", 4, 8, "const:20ms;w0=const:2ms");
  o.partition = "by-class";
  o.clock = clock;
  o.iterations = 25;
  const auto run = run_ok(o);
  CHECK(run.updates.size() == 25);
  bool several = false;
  for (const auto& [it, gs] : by_update(run)) {
    std::multiset<int> from;
    for (const auto& g : gs) {
      CHECK(g.staleness == 0);
      from.insert(g.worker);
    }
    for (int w = 0; w < 4; ++w) CHECK(from.count(w) >= 1);
    several = several || from.count(0) > 1;
  }
  CHECK(several);  // the fast worker gives several, which its mean weighs as one worker
  REQUIRE(run.shards.size() == 4);
  REQUIRE_FALSE(run.evals.empty());
  CHECK(run.evals.back().test_error < run.evals.front().test_error);  // it learns
}

TEST_CASE("malenia: no partition, no S or a bad S is one line and exit 2", "[rules][cli]") {
  check_bad_train_flags({
      {{"--workers", "4", "--rule", "malenia", "--k", "4"}, "give --partition"},
      {{"--workers", "4", "--rule", "malenia", "--partition", "iid"}, "needs --k S"},
      {{"--workers", "4", "--rule", "malenia", "--k", "0", "--partition", "iid"}, "--k"},
  });
}
