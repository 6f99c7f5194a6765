// RuleState: a rule's own fields in a checkpoint (rule_state.hpp), written by save_state behind
// the rule's name and state version, read back by load_state; what does not fit is refused with
// a line naming the rule and the field.
#include "stalesgd/rules/rule_state.hpp"

#include <catch2/catch.hpp>

#include "rules/rule_test_util.hpp"
#include "util/state_stream.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

TEST_CASE("rule state: named fields read back by type, a wrong one marks the state bad",
          "[rules][state]") {
  RuleState out;
  out.put("count", std::int64_t{7});
  out.put("rate", 0.25);
  out.put("label", std::string("w3"));
  out.put("pushed", std::vector<std::int64_t>{1, 2, 3});
  out.put("means", std::vector<double>{0.5, 1.5});
  out.put("live", std::vector<bool>{true, false, true});
  RuleState in(2, out.fields());
  CHECK(in.version() == 2);
  CHECK(in.integer("count") == 7);
  CHECK(in.number("rate") == 0.25);
  CHECK(in.text("label") == "w3");
  CHECK(in.integers("pushed", 3) == std::vector<std::int64_t>{1, 2, 3});
  CHECK(in.numbers("means") == std::vector<double>{0.5, 1.5});
  CHECK(in.flags("live", 3) == std::vector<bool>{true, false, true});
  CHECK(in.ok());

  RuleState missing(1, out.fields());
  CHECK_FALSE(missing.integer("counted").has_value());
  CHECK(missing.error() == "no field 'counted'");
  RuleState typed(1, out.fields());
  CHECK_FALSE(typed.number("count").has_value());
  CHECK(typed.error() == "field 'count' is not a number");
  RuleState sized(1, out.fields());
  CHECK_FALSE(sized.integers("pushed", 4).has_value());
  CHECK(sized.error() == "field 'pushed' holds 3 values, not 4");
  RuleState flags(1, out.fields());
  CHECK_FALSE(flags.flags("pushed").has_value());
  CHECK(flags.error() == "field 'pushed' holds 2, not a flag (0 or 1)");
}

TEST_CASE("rule state: a rule's checkpoint restores its fields, and one of another rule is refused",
          "[rules][state]") {
  // k-async's round: worker 1 counted, one gradient pending.
  auto a = rule("k-async", 4, 3);
  push(*a, 1, 0, 0);
  StateWriter w;
  a->save(w);
  auto b = rule("k-async", 4, 3);
  StateReader r(w.bytes());
  b->load(r);
  REQUIRE(r.ok());
  CHECK(b->pending() == 1);
  // Worker 1 is counted in the round already: its next push does not complete a K = 3 round
  // any sooner than the restored rule's, so both answer alike from here.
  for (const int worker : {2, 3}) {
    const Decision da = push(*a, worker, 0, 0), db = push(*b, worker, 0, 0);
    CHECK(da.apply == db.apply);
  }
  // Another rule's checkpoint: refused, naming both.
  auto sync = rule("k-sync", 4, 3);
  StateReader other(w.bytes());
  sync->load(other);
  CHECK_FALSE(other.ok());
  CHECK_THAT(other.error(), Contains("the checkpoint holds rule 'k-async', not k-sync"));
  // A forged name with a newline in it (a fuzzer finding) stays on one line.
  StateWriter forged;
  forged.tag("rule");
  forged.str("k-a\nsync");
  forged.i64(1);
  forged.i64(3);
  forged.i64(0);
  forged.u64(0);
  StateReader bad(forged.bytes());
  sync->load(bad);
  CHECK_FALSE(bad.ok());
  CHECK_THAT(bad.error(), Contains("holds rule 'k-a?sync', not k-sync"));
}
