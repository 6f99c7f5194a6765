// The rule registry: resolve_rule's names, K defaults and one-line errors, make_rule, and a
// program's own rule registered beside the built-in ones.
#include "stalesgd/rules/rule_registry.hpp"

#include <catch2/catch.hpp>

#include "rules/k_async.hpp"
#include "rules/rule_test_util.hpp"
#include "stalesgd/straggler/distribution.hpp"
#include "stalesgd/theory/runtime.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

TEST_CASE("resolve_rule validates names, P and K, and make_rule builds that rule", "[rules]") {
  CHECK_THAT(resolve_rule({"ssgd", 0}, 4).error().message,
             Contains("unknown rule 'ssgd'") && Contains("k-batch-async") && Contains("backup"));
  CHECK_THAT(resolve_rule({"k-sync", 5}, 4).error().message,
             Contains("--k 5 is out of range for --workers 4"));
  CHECK_THAT(resolve_rule({"k-async", -1}, 4).error().message, Contains("1 <= K <= P"));
  CHECK_THAT(resolve_rule({"k-async", 0}, 4).error().message, Contains("needs --k"));
  CHECK_THAT(resolve_rule({"sync", 2}, 4).error().message, Contains("use --rule k-sync --k 2"));
  CHECK_THAT(resolve_rule({"async", 3}, 4).error().message, Contains("use --rule k-async --k 3"));
  CHECK_THAT(resolve_rule({"sync", 0}, 0).error().message, Contains("at least 1"));
  CHECK(resolve_rule({"sync", 4}, 4).value().k == 4);
  CHECK(resolve_rule({"async", 1}, 4).value().k == 1);
  for (const RuleInfo* info : registered_rules()) {
    INFO(info->name);
    RuleSpec spec{info->name, info->k == KChoice::kGiven ? 2 : 0};
    // Each integer option a rule takes at 1 or its least (ssp's s, backup's b = 1: K = 2), so
    // that a rule with one needs no line here; mindflayer's limit is text its parser reads.
    for (const RuleOption& option : info->options) {
      if (option.type == RuleOptionType::kInteger) {
        spec.params.set(option.name, std::max(option.min, std::int64_t{1}));
      }
      if (option.name == "time-limit") spec.params.set("time-limit", std::string("10ms"));
    }
    auto r = resolve_rule(spec, 3);
    REQUIRE(r.ok());
    CHECK(r->name() == info->name);
    const auto rule = make_rule(*r);
    CHECK(rule->k() == r->k);
    // The registration's flag and the state machine's agree, and the config reports it.
    CHECK(rule->synchronous() == info->synchronous);
    CHECK(r->synchronous() == info->synchronous);
    CHECK_FALSE(info->summary.empty());
  }
}

TEST_CASE("every rule's closed form is the one its registration gives", "[rules][theory]") {
  auto x = parse_distribution("exp:mean=10ms");
  REQUIRE(x.ok());
  for (const auto& spec : every_rule_specs(4)) {
    INFO(spec.name << " K=" << spec.k);
    const auto r = resolve_rule(spec, 4);
    REQUIRE(r.ok());
    const RuleInfo* info = find_rule(spec.name);
    REQUIRE(info != nullptr);
    REQUIRE(info->closed_form);  // the paper gives one for each of its rules under exp delays
    CHECK(closed_form_runtime(*r, **x)->seconds == info->closed_form(*r, **x)->seconds);
  }
  // The sweep: sync and async once, the k- rules at K = 1, 2, 4, not ssp, backup, rennala and
  // ringmaster (flags of their own), nor m-sync and fedbuff (k-sync and k-batch-async again).
  CHECK(every_rule_specs(4).size() == 2 + 4 * 3);
}

namespace {

// k-async that also drops a gradient more than `cap` versions stale (examples/custom_rule has
// the same idea as a user's program).
class CappedKAsync final : public Rule {
 public:
  CappedKAsync(int workers, int k, std::uint64_t cap)
      : Rule(workers, k), inner_(workers, k), cap_(cap) {}
  std::string_view name() const override { return "capped"; }
  bool synchronous() const override { return false; }
  Decision on_gradient(const Arrival& a) override {
    if (a.current - a.computed_on > cap_) return {.accept = false, .next = AfterPush::kContinue};
    return inner_.on_gradient(a);
  }

 private:
  KAsync inner_;
  std::uint64_t cap_;
};

}  // namespace

TEST_CASE("register_rule: a program's own rule is resolved and made by name", "[rules]") {
  const auto capped = register_rule({.name = "capped-test",
                                     .summary = "k-async without gradients over 1 version stale",
                                     .make = [](const RuleConfig& c) -> std::unique_ptr<Rule> {
                                       return std::make_unique<CappedKAsync>(c.workers, c.k, 1);
                                     }});
  REQUIRE(capped.ok());
  CHECK_THAT(rule_choices(), Contains("| capped-test"));
  auto r = resolve_rule({"capped-test", 2}, 4);
  REQUIRE(r.ok());
  CHECK_FALSE(r->synchronous());
  auto rule = make_rule(*r);
  CHECK(rule->name() == "capped");
  CHECK_FALSE(rule->on_gradient({.worker = 0, .computed_on = 3, .current = 5}).accept);
  CHECK(rule->on_gradient({.worker = 0, .computed_on = 4, .current = 5}).accept);
  CHECK(rule->on_gradient({.worker = 1, .computed_on = 5, .current = 5}).apply);
  // No closed form registered: the theory says so rather than guess.
  auto x = parse_distribution("exp:mean=10ms");
  REQUIRE(x.ok());
  CHECK_FALSE(closed_form_runtime(*r, **x).has_value());

  CHECK_THAT(
      register_rule({.name = "capped-test", .make = find_rule("k-async")->make}).error().message,
      Contains("registered already"));
  CHECK_THAT(register_rule({.name = "k-sync", .make = find_rule("k-async")->make}).error().message,
             Contains("registered already"));
  CHECK_THAT(register_rule({.name = "a b", .make = find_rule("k-async")->make}).error().message,
             Contains("not a rule name"));
  CHECK_THAT(register_rule({.name = "no-make"}).error().message, Contains("has no make"));
}

TEST_CASE("rule_at_workers: the same rule for another P, K as the rule takes it", "[rules]") {
  const auto at = [](RuleSpec spec, int from, int to) {
    auto c = resolve_rule(spec, from);
    REQUIRE(c.ok());
    auto r = rule_at_workers(*c, to);
    REQUIRE(r.ok());
    CHECK(r->workers == to);
    return *r;
  };
  CHECK(at({"sync"}, 8, 4).k == 4);
  CHECK(at({"async"}, 8, 4).k == 1);
  CHECK(at({"k-sync", 6}, 8, 4).k == 4);  // K at most P
  CHECK(at({"k-batch-async", 3}, 8, 16).k == 3);
  const auto backup = at(spec_with("backup", 0, "backups", 3), 8, 2);  // b = 3, at most P - 1
  CHECK(backup.rule == "backup");
  CHECK(backup.params.integer("backups", -1) == 1);
  CHECK(backup.k == 1);
  RuleSpec ssp{"ssp"};
  ssp.params.set("staleness-bound", std::int64_t{2});
  CHECK(at(ssp, 8, 4).params.integer("staleness-bound", -1) == 2);
  RuleSpec rennala{"rennala", 12};
  rennala.params.set("old-point", std::string("interrupt"));
  const auto r = at(rennala, 4, 2);  // S may exceed P
  CHECK(r.k == 12);
  CHECK(r.params.text("old-point") == "interrupt");
  RuleSpec mindflayer{"mindflayer", 3};
  mindflayer.params.set("time-limit", std::string("10ms;w1=30ms"));
  const auto m = at(mindflayer, 2, 4);
  CHECK(m.k == 3);
  CHECK(m.params.text("time-limit") == "10ms;w1=30ms");  // the new workers take worker 0's
  CHECK(at(mindflayer, 2, 1).params.text("time-limit") == "10ms");
}
