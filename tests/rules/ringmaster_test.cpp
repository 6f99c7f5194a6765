// ringmaster (rules/ringmaster.hpp): async that ignores a gradient R or more updates stale, by
// hand and from the gradients the thread engine and the virtual clock record; its bad input.
#include <catch2/catch.hpp>

#include "engine/engine_test_util.hpp"
#include "rules/rule_test_util.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

namespace {
std::unique_ptr<Rule> ringmaster(int workers, std::int64_t r) {
  RuleSpec spec{"ringmaster"};
  spec.params.set("staleness-threshold", std::int64_t{r});
  auto config = resolve_rule(spec, workers);
  REQUIRE(config.ok());
  return make_rule(*config);
}

// Worker 0 ten times faster than the others, so that their gradients come back stale.
TrainerOptions skewed(const std::string& rule, std::int64_t r) {
  auto o = quick_options(rule, 6, 0, "exp:mean=10ms;w0=exp:mean=1ms");
  if (r >= 0) o.rule.params.set("staleness-threshold", std::int64_t{r});
  o.iterations = 150;
  return o;
}
}  // namespace

TEST_CASE("ringmaster applies a gradient with delay < R and ignores the rest", "[rules]") {
  auto r = ringmaster(4, 2);
  CHECK_FALSE(r->synchronous());
  CHECK(r->k() == 1);
  CHECK(push(*r, 0, 7, 7).apply);          // delay 0
  CHECK(push(*r, 1, 6, 7).apply);          // delay 1
  const auto ignored = push(*r, 2, 5, 7);  // delay 2 = R
  CHECK_FALSE(ignored.accept);
  CHECK_FALSE(ignored.apply);
  CHECK(ignored.next == AfterPush::kContinue);  // starts again on the current parameters
  CHECK_FALSE(push(*r, 3, 0, 7).accept);
  CHECK(ringmaster(4, 1000)->on_gradient({0, 0, 999}).apply);
}

TEST_CASE("ringmaster on threads and the virtual clock: no applied gradient is R stale",
          "[rules][engine]") {
  const auto engine = GENERATE(from_range(in_process_engines()));
  INFO(engine.describe());
  auto o = skewed("ringmaster", 2);
  engine.apply(o);
  const auto run = run_ok(o);
  CHECK(run.updates.size() == 150);
  std::uint64_t fresh = 0;
  for (const auto& [it, gs] : by_update(run)) {
    REQUIRE(gs.size() == 1);
    CHECK(gs[0].staleness < 2);
    fresh += gs[0].staleness == 0;
  }
  CHECK(fresh > 0);
  CHECK(total(run, &WorkerRecord::cancelled) > 0);  // the slow workers' outdated gradients
  // The same run as plain async applies gradients 2 and more updates stale.
  auto a = skewed("async", -1);
  engine.apply(a);
  std::uint64_t stale = 0;
  for (const auto& g : run_ok(a).gradients) stale += g.staleness >= 2;
  CHECK(stale > 0);
}

TEST_CASE("ringmaster --old-point interrupt stops a computation as its delay reaches R",
          "[rules][engine]") {
  RuleSpec spec{"ringmaster"};
  spec.params.set("staleness-threshold", std::int64_t{2});
  spec.params.set("old-point", std::string("interrupt"));
  auto config = resolve_rule(spec, 4);
  REQUIRE(config.ok());
  const auto rule = make_rule(*config);
  CHECK_FALSE(rule->cuts_at(5, 6));              // delay 1
  CHECK(rule->cuts_at(5, 7));                    // delay 2 = R
  CHECK_FALSE(ringmaster(4, 2)->cuts_at(5, 7));  // Algorithm 1 lets it run to its push

  const auto engine = GENERATE(from_range(in_process_engines()));
  INFO(engine.describe());
  auto o = skewed("ringmaster", 2);
  o.rule.params.set("old-point", std::string("interrupt"));
  engine.apply(o);
  const auto run = run_ok(o);
  CHECK(run.updates.size() == 150);
  for (const auto& g : run.gradients) CHECK(g.staleness < 2);
  // Nothing R stale reaches the server: every push is applied, and the stopped computations
  // are the cancelled ones.
  for (const auto& w : run.workers) {
    INFO("worker " << w.worker);
    CHECK(w.pushed == w.applied);
  }
  CHECK(total(run, &WorkerRecord::cancelled) > 0);
}

TEST_CASE("ringmaster: a missing or bad R is one line and exit 2", "[rules][cli]") {
  check_bad_train_flags({
      {{"--rule", "ringmaster"}, "needs --staleness-threshold R"},
      {{"--rule", "ringmaster", "--staleness-threshold", "0"}, "--staleness-threshold"},
      {{"--rule", "ringmaster", "--staleness-threshold", "2", "--k", "3"}, "drop --k"},
      {{"--rule", "async", "--staleness-threshold", "2"}, "ringmaster only"},
      {{"--rule", "ringmaster", "--staleness-threshold", "2", "--old-point", "now"},
       "--old-point 'now': must be discard or interrupt"},
  });
}
