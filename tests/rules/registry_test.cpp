// resolve_rule and make_rule: names, K defaults and the one-line errors for bad K.
#include "stalesgd/rules/rule.hpp"

#include <catch2/catch.hpp>

using namespace stalesgd;
using Catch::Matchers::Contains;

TEST_CASE("resolve_rule validates names, P and K, and make_rule builds that rule", "[rules]") {
  CHECK_THAT(resolve_rule({"ssgd", 0}, 4).error().message,
             Contains("unknown rule 'ssgd'") && Contains("k-batch-async"));
  CHECK_THAT(resolve_rule({"k-sync", 5}, 4).error().message,
             Contains("--k 5 is out of range for --workers 4"));
  CHECK_THAT(resolve_rule({"k-async", -1}, 4).error().message, Contains("1 <= K <= P"));
  CHECK_THAT(resolve_rule({"k-async", 0}, 4).error().message, Contains("needs --k"));
  CHECK_THAT(resolve_rule({"sync", 2}, 4).error().message, Contains("use --rule k-sync --k 2"));
  CHECK_THAT(resolve_rule({"async", 3}, 4).error().message, Contains("use --rule k-async --k 3"));
  CHECK_THAT(resolve_rule({"sync", 0}, 0).error().message, Contains("at least 1"));
  CHECK(resolve_rule({"sync", 4}, 4).value().k == 4);
  CHECK(resolve_rule({"async", 1}, 4).value().k == 1);
  for (const auto& name : rule_names()) {
    const bool ssp = name == "ssp";  // K = 1, and its own --staleness-bound
    auto r = resolve_rule({name, name == "async" || ssp ? 1 : 2, ssp ? 0 : -1}, 2);
    REQUIRE(r.ok());
    CHECK(to_string(r->kind) == name);
    CHECK(make_rule(*r)->name() == name);
    CHECK(make_rule(*r)->k() == r->k);
  }
}
