// mindflayer (rules/mindflayer.hpp) and its time limits (straggler/time_limit.hpp): the rule by
// hand, the attempts drawn under a limit, every engine's records against the rounds replayed
// from the delay streams, and the bad input.
#include <catch2/catch.hpp>

#include <cmath>

#include "engine/engine_test_util.hpp"
#include "rules/mindflayer_replay.hpp"
#include "rules/protocol_test_util.hpp"
#include "rules/rule_test_util.hpp"
#include "stalesgd/rules/rule_registry.hpp"
#include "stalesgd/straggler/profile.hpp"
#include "stalesgd/straggler/time_limit.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

namespace {

std::unique_ptr<Rule> mindflayer(int workers, int b, const std::string& limit) {
  RuleSpec spec{"mindflayer", b};
  spec.params.set("time-limit", std::string(limit));
  auto config = resolve_rule(spec, workers);
  REQUIRE(config.ok());
  return make_rule(*config);
}

Decision attempt(Rule& r, int w, int attempts, bool abandoned) {
  return r.on_gradient({w, 0, 0, attempts, abandoned});
}

}  // namespace

TEST_CASE("time limits parse like the delay language and describe back", "[straggler]") {
  auto l = parse_time_limits("30ms;w2-3=90ms;w3=1s", 5);
  REQUIRE(l.ok());
  CHECK(*l == std::vector<double>{0.03, 0.03, 0.09, 1.0, 0.03});
  CHECK(describe_time_limits(*l) == "30ms;w2=90ms;w3=1s");
  CHECK(*parse_time_limits(describe_time_limits(*l), 5) == *l);
  for (const auto& [text, expected] :
       std::vector<std::pair<std::string, std::string>>{{"30", "has no unit"},
                                                        {"0ms", "above 0"},
                                                        {"30ms;w9=1ms", "worker 9 does not exist"},
                                                        {"30ms;w1", "no '='"},
                                                        {"30ms;w1=fast", "clause 'w1=fast'"},
                                                        {"", "clause ''"}}) {
    auto bad = parse_time_limits(text, 4);
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(bad.error().message, Contains(expected));
  }
}

TEST_CASE("draw_attempts abandons each draw past the limit and stops at the budget",
          "[straggler]") {
  auto profile = StragglerProfile::parse("exp:mean=10ms", 1);
  REQUIRE(profile.ok());
  DelaySampler plain(*profile, 0, 7), limited(*profile, 0, 7);
  for (int i = 0; i < 200; ++i) {
    const auto a = draw_attempts(limited, 0.0, {.limit_s = 0.008, .attempts = 3});
    // The same draws, one by one: the abandoned ones first, each costing the limit.
    double offset = 0.0, x = 0.0;
    int n = 0;
    do {
      x = plain.next(0.0);
      ++n;
      if (x > 0.008) offset += 0.008;
    } while (x > 0.008 && n < 3);
    CHECK(a.attempts == n);
    CHECK(a.abandoned == (x > 0.008));
    CHECK(a.offset_s == Approx(x > 0.008 ? offset - 0.008 : offset));
    CHECK(a.delay_s == Approx(x > 0.008 ? 3 * 0.008 : offset + x));
    CHECK(a.delay_s - a.offset_s <= 0.008 + 1e-12);  // no attempt outlives its limit
  }
  DelaySampler free_run(*profile, 0, 7), check(*profile, 0, 7);
  CHECK(draw_attempts(free_run, 0.0, {}).delay_s == check.next(0.0));
}

TEST_CASE("mindflayer: B attempts per worker, the round ends when every worker spent them",
          "[rules]") {
  auto r = mindflayer(2, 2, "10ms;w1=30ms");
  CHECK(r->synchronous());
  CHECK_FALSE(r->cuts_in_flight());
  CHECK(r->budget(0).limit_s == 0.01);
  CHECK(r->budget(1).limit_s == 0.03);
  CHECK(r->budget(0).attempts == 2);
  auto d = attempt(*r, 0, 1, false);  // worker 0: one kept, one attempt left
  CHECK((d.accept && !d.apply && d.next == AfterPush::kContinue));
  CHECK(r->budget(0).attempts == 1);
  d = attempt(*r, 0, 1, true);  // its second abandoned: it waits
  CHECK((!d.accept && !d.apply && d.next == AfterPush::kWait));
  d = attempt(*r, 1, 2, false);  // worker 1: one abandoned, then one kept: the round is done
  CHECK((d.accept && d.apply));
  CHECK(r->pending() == 0);
  CHECK(r->budget(0).attempts == 2);
  // A round that keeps nothing still ends, on the abandoned push: a zero step.
  CHECK_FALSE(attempt(*r, 0, 2, true).apply);
  d = attempt(*r, 1, 2, true);
  CHECK((!d.accept && d.apply));
}

TEST_CASE("mindflayer: --attempts gives a worker its own B, in the round and in the divisor",
          "[rules]") {
  RuleSpec spec{"mindflayer", 1};
  spec.params.set("time-limit", std::string("10ms"));
  spec.params.set("attempts", std::string("w1=3"));
  auto config = resolve_rule(spec, 2);
  REQUIRE(config.ok());
  auto r = make_rule(*config);
  CHECK(r->budget(0).attempts == 1);
  CHECK(r->budget(1).attempts == 3);
  CHECK(attempt(*r, 0, 1, false).next == AfterPush::kWait);  // worker 0 spent its one
  CHECK_FALSE(attempt(*r, 1, 1, false).apply);               // worker 1 has two left
  CHECK_FALSE(attempt(*r, 1, 1, true).apply);
  CHECK(attempt(*r, 1, 1, false).apply);  // its third: the round is done
  // As published: divided by sum_i P(X_i <= t_i) B_i = 1 * 1 + 0.5 * 3 (uniform 0-20 ms).
  r->use_delays(StragglerProfile::parse("const:5ms;w1=uniform:0ms..20ms", 2).value());
  CHECK(r->update_divisor(2) == Approx(1.0 + 0.5 * 3));
  // More workers keep the others' B_i and give the new ones --k.
  const auto& info = *find_rule("mindflayer");
  auto wider = info.at_workers(*config, 4);
  REQUIRE(wider.ok());
  auto w4 = make_rule(*wider);
  CHECK(w4->budget(1).attempts == 3);
  CHECK(w4->budget(3).attempts == 1);
  auto narrower = info.at_workers(*config, 1);
  REQUIRE(narrower.ok());
  CHECK_FALSE(narrower->params.has("attempts"));  // worker 1's override left with it
}

TEST_CASE("mindflayer with per-worker B keeps exactly each worker's attempts within its limit",
          "[rules][engine]") {
  const auto engine = GENERATE(from_range(in_process_engines()));
  INFO(engine.describe());
  auto o = quick_options("mindflayer-kept", 3, 1, "exp:mean=10ms");
  o.rule.params.set("time-limit", std::string("8ms"));
  o.rule.params.set("attempts", std::string("w1=3;w2=2"));
  o.iterations = 30;
  engine.apply(o);
  const auto run = run_ok(o);
  REQUIRE(run.updates.size() == 30);
  const auto kept = mindflayer_kept(o.delay, o.seed, {0.008, 0.008, 0.008}, {1, 3, 2}, 30);
  std::map<std::pair<std::uint64_t, int>, int> recorded;
  for (const auto& g : run.gradients) ++recorded[{g.iteration, g.worker}];
  CHECK(recorded == kept);
  // Worker 1 kept more gradients than worker 0, which makes one attempt a round.
  int by0 = 0, by1 = 0;
  for (const auto& [key, n] : kept) {
    if (key.second == 0) by0 += n;
    if (key.second == 1) by1 += n;
  }
  CHECK(by1 > by0);
}

TEST_CASE("mindflayer: the protocol holds a spent worker and restarts everyone at the update",
          "[rules]") {
  RuleSpec spec{"mindflayer", 1};
  spec.params.set("time-limit", std::string("10ms"));
  auto config = resolve_rule(spec, 3);
  REQUIRE(config.ok());
  auto rule = make_rule(*config);
  RoundProtocol p(*rule, 3);
  p.begin();
  CHECK(p.on_arrival(0, 0, 0, 1, true).start.empty());  // abandoned, spent: waits
  CHECK(p.on_arrival(1, 0, 0, 1, false).start.empty());
  CHECK(p.cancelled(0) == 1);
  const auto step = p.on_arrival(2, 0, 0, 1, true);
  CHECK(step.decision.apply);
  CHECK(starts(step.start) == "0 1 2");
  // A worker's departure ends the round the others wait in.
  CHECK(p.on_arrival(0, 1, 1, 1, false).start.empty());
  CHECK(p.on_arrival(1, 1, 1, 1, false).start.empty());
  const auto r = p.retire(2, 1);
  CHECK(r.runs_on);
  CHECK(r.step.decision.apply);
}

TEST_CASE("mindflayer on threads and the virtual clock keeps exactly the attempts within limits",
          "[rules][engine]") {
  const auto engine = GENERATE(from_range(in_process_engines()));
  INFO(engine.describe());
  // Worker 1's limit is below most of its draws: many of its attempts are abandoned, and some
  // rounds keep nothing from anyone.
  auto o = quick_options("mindflayer", 3, 2, "exp:mean=10ms");
  o.rule.params.set("time-limit", std::string("8ms;w1=2ms;w2=4ms"));
  o.iterations = 40;
  engine.apply(o);
  const auto run = run_ok(o);
  REQUIRE(run.updates.size() == 40);
  const std::vector limits{0.008, 0.002, 0.004};
  const auto kept = mindflayer_kept(o.delay, o.seed, limits, 2, 40);
  std::map<std::pair<std::uint64_t, int>, int> recorded;
  for (const auto& g : run.gradients) {
    ++recorded[{g.iteration, g.worker}];
    CHECK(g.staleness == 0);
    // The gradient's own attempt, as the engine measured it (offset by the abandoned ones);
    // on the virtual clock exactly its draw.
    if (engine.clock == ClockKind::kVirtual) CHECK(g.duration_s <= limits[std::size_t(g.worker)]);
  }
  CHECK(recorded == kept);
  // The rounds that kept nothing are updates all the same: zero steps.
  std::set<std::uint64_t> keeping;
  for (const auto& [key, n] : kept) keeping.insert(key.first);
  std::size_t empty = 0;
  for (const auto& u : run.updates) empty += u.n_grads == 0 ? 1 : 0;
  CHECK(empty == 40 - keeping.size());
  CHECK(empty > 0);
  CHECK(total(run, &WorkerRecord::cancelled) > 0);  // the abandoned pushes
}

TEST_CASE("mindflayer: a missing or bad B or time limit is one line and exit 2", "[rules][cli]") {
  check_bad_train_flags({
      {{"--rule", "mindflayer", "--k", "2"}, "needs --time-limit D"},
      {{"--rule", "mindflayer", "--time-limit", "10ms"}, "needs --k B"},
      {{"--rule", "mindflayer", "--k", "2", "--time-limit", "10"}, "write 10ms"},
      {{"--rule", "mindflayer", "--k", "2", "--time-limit", "soon"}, "--time-limit 'soon'"},
      {{"--rule", "mindflayer", "--k", "2", "--time-limit", "10ms;w5=1ms"}, "worker 5"},
      {{"--rule", "mindflayer", "--k", "2", "--time-limit", "10ms", "--attempts", "w0=0"},
       "--attempts 'w0=0': clause 'w0=0': B must be an integer >= 1"},
      {{"--rule", "mindflayer", "--k", "2", "--time-limit", "10ms", "--attempts", "w1"},
       "no '='; write <workers>=<B>"},
      {{"--rule", "mindflayer", "--k", "2", "--time-limit", "10ms", "--attempts", "w7=2"},
       "worker 7"},
      {{"--rule", "async", "--attempts", "w1=2"}, "mindflayer and mindflayer-kept only"},
      {{"--rule", "async", "--time-limit", "10ms"}, "mindflayer and mindflayer-kept only"},
      // As published it needs each worker's delay distribution: not a trace, not a change.
      {{"--rule", "mindflayer", "--k", "2", "--time-limit", "10ms", "--workers", "2", "--delay",
        "exp:mean=10ms;w1@5s=x3"},
       "worker 1's delays change over time or replay a trace; use --rule mindflayer-kept"},
  });
}

TEST_CASE("a worker's chance to finish within a limit, from its delay distribution",
          "[straggler]") {
  const auto p = StragglerProfile::parse("exp:mean=10ms;w1=x2;w2@5s=x3", 3).value();
  CHECK(p.chance_within(0, 0.020).value() == Approx(1.0 - std::exp(-2.0)));
  CHECK(p.chance_within(1, 0.020).value() == Approx(1.0 - std::exp(-1.0)));  // twice as slow
  CHECK_FALSE(p.chance_within(2, 0.020));                                    // changes at 5 s
  CHECK_FALSE(p.chance_within(3, 0.020));                                    // no such worker
  const auto c = StragglerProfile::parse("const:15ms", 1).value();
  CHECK(c.chance_within(0, 0.020).value() == 1.0);
  CHECK(c.chance_within(0, 0.010).value() == 0.0);
}
