// k-quota-async (src/rules/k_quota_async.cpp): the first K gradients, at most Q from one worker;
// by hand, against k-async (Q = 1) and k-batch-async (Q >= K) on the same arrivals, from the
// gradients every in-process engine records, through a checkpoint, and its bad input.
#include <catch2/catch.hpp>

#include <map>
#include <random>

#include "engine/engine_test_util.hpp"
#include "rules/protocol_test_util.hpp"
#include "util/state_stream.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

namespace {

RuleSpec quota_spec(int k, std::int64_t q) {
  return spec_with("k-quota-async", k, "quota", q);
}

std::unique_ptr<Rule> quota_rule(int workers, int k, std::int64_t q) {
  auto config = resolve_rule(quota_spec(k, q), workers);
  REQUIRE(config.ok());
  return make_rule(*config);
}

// A rule and its protocol, every worker started; push() tells what worker w's push led to: "a"
// the update, "w" the worker waits for it, "c" it goes on.
struct Driven : ProtocolDriver {
  Driven(std::unique_ptr<Rule> r, int workers) : ProtocolDriver(std::move(r), workers) {
    (void)protocol.begin();
  }
  std::string push(int w) {
    const auto step = ProtocolDriver::push(w);
    return step.decision.apply ? "a" : step.decision.next == AfterPush::kWait ? "w" : "c";
  }
};

// The same random arrivals (among the workers computing under both) through two rules: the
// decisions of each push, which must agree push for push.
void same_decisions(std::unique_ptr<Rule> a, std::unique_ptr<Rule> b, int workers) {
  Driven x(std::move(a), workers);
  Driven y(std::move(b), workers);
  std::mt19937 rng(7);
  for (int i = 0; i < 400; ++i) {
    std::vector<int> computing;
    for (int w = 0; w < workers; ++w) {
      if (x.protocol.computing(w)) computing.push_back(w);
      CHECK(x.protocol.computing(w) == y.protocol.computing(w));
    }
    REQUIRE_FALSE(computing.empty());
    const int w =
        computing[std::uniform_int_distribution<std::size_t>(0, computing.size() - 1)(rng)];
    INFO("arrival " << i << ", worker " << w);
    REQUIRE(x.push(w) == y.push(w));
  }
  CHECK(x.version == y.version);
  CHECK(x.version > 50);
}

}  // namespace

TEST_CASE("k-quota-async: a worker gives at most Q of a round's K, then waits", "[rules]") {
  Driven d(quota_rule(3, 3, 2), 3);
  CHECK_FALSE(d.rule->synchronous());
  CHECK(d.push(0) == "c");
  CHECK(d.push(0) == "w");  // its quota: it waits for the update
  CHECK_FALSE(d.protocol.computing(0));
  CHECK(d.push(1) == "a");  // the third gradient: the update, and 0 starts on it
  CHECK(d.protocol.computing(0));
  CHECK(d.protocol.version_of(0) == 1);
  CHECK(d.protocol.version_of(2) == 0);  // 2 computes on, stale
  CHECK(d.push(2) == "c");
  CHECK(d.push(2) == "w");
  CHECK(d.push(0) == "a");
}

TEST_CASE("k-quota-async: Q = 1 decides as k-async, Q >= K as k-batch-async", "[rules]") {
  same_decisions(quota_rule(5, 3, 1), rule("k-async", 5, 3), 5);
  same_decisions(quota_rule(5, 3, 3), rule("k-batch-async", 5, 3), 5);
  same_decisions(quota_rule(5, 3, 50), rule("k-batch-async", 5, 3), 5);
}

TEST_CASE("k-quota-async: runs while the live workers' quotas cover K", "[rules]") {
  auto r = quota_rule(4, 4, 2);
  CHECK(r->runs_with(2));
  CHECK_FALSE(r->runs_with(1));
  CHECK(quota_rule(4, 4, 4)->runs_with(1));
}

TEST_CASE("k-quota-async on threads and the virtual clock: no worker gives an update more than Q",
          "[rules][engine]") {
  const auto engine = GENERATE(from_range(in_process_engines()));
  INFO(engine.describe());
  // Worker 0 eight times faster than the others: unchecked, it fills whole rounds.
  auto run_with = [&](const std::string& name, std::int64_t q) {
    auto o = quick_options(name, 4, 4, "exp:mean=8ms;w0=exp:mean=1ms");
    if (q > 0) o.rule.params.set("quota", q);
    o.iterations = 120;
    engine.apply(o);
    return run_ok(o);
  };
  const auto run = run_with("k-quota-async", 2);
  CHECK(run.updates.size() == 120);
  int full = 0;  // updates in which worker 0 gave its whole quota
  for (const auto& [it, gs] : by_update(run)) {
    REQUIRE(gs.size() == 4);
    std::map<int, int> given;
    for (const auto& g : gs) ++given[g.worker];
    for (const auto& [w, n] : given) CHECK(n <= 2);
    full += given[0] == 2;
  }
  CHECK(full > 0);
  // The same arrivals under k-batch-async let worker 0 give more than two.
  int more = 0;
  for (const auto& [it, gs] : by_update(run_with("k-batch-async", 0))) {
    more += std::count_if(gs.begin(), gs.end(), [](const auto& g) { return g.worker == 0; }) > 2;
  }
  CHECK(more > 0);
}

TEST_CASE("k-quota-async: a checkpoint keeps who gave what this round", "[rules][resume]") {
  Driven d(quota_rule(3, 3, 2), 3);
  (void)d.push(0);
  (void)d.push(0);  // 0 waits: the round holds 2 of 3
  StateWriter out;
  d.rule->save(out);
  d.protocol.save(out);
  Driven e(quota_rule(3, 3, 2), 3);
  StateReader in(out.bytes());
  e.rule->load(in);
  e.protocol.load(in);
  REQUIRE(in.ok());
  e.version = d.version;
  CHECK(e.rule->pending() == 2);
  CHECK_FALSE(e.protocol.computing(0));
  CHECK(e.push(2) == "a");
  CHECK(e.protocol.version_of(0) == 1);
  // A state whose counts are not the round's is refused.
  RuleState forged(1, {{"given", std::vector<std::int64_t>{2, 1, 0}}});
  auto f = quota_rule(3, 3, 2);
  f->load_state(forged);  // the round holds 0 gradients, not 3
  CHECK_FALSE(forged.ok());
  RuleState over(1, {{"given", std::vector<std::int64_t>{0, 0, 3}}});
  f->load_state(over);
  CHECK_FALSE(over.ok());
}

TEST_CASE("k-quota-async: a missing or bad Q or K is one line and exit 2", "[rules][cli]") {
  check_bad_train_flags({
      {{"--rule", "k-quota-async", "--k", "2"}, "needs --quota Q"},
      {{"--rule", "k-quota-async", "--quota", "2"}, "needs --k K"},
      {{"--rule", "k-quota-async", "--k", "2", "--quota", "0"}, "--quota"},
      {{"--rule", "k-quota-async", "--k", "9", "--quota", "2", "--workers", "4"}, "not 9"},
      {{"--rule", "k-async", "--k", "2", "--quota", "2"}, "k-quota-async only"},
  });
}
