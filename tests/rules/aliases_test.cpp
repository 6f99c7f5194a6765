// m-sync and fedbuff (rules/m_sync.cpp, rules/fedbuff.cpp): the paper's k-sync and
// k-batch-async under the names of the papers that use them; on the virtual clock a run under
// either name records the other's gradients, update for update.
#include <catch2/catch.hpp>

#include "engine/engine_test_util.hpp"
#include "rules/rule_test_util.hpp"
#include "stalesgd/rules/rule_registry.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

TEST_CASE("m-sync is k-sync and fedbuff is k-batch-async, gradient for gradient",
          "[rules][engine]") {
  for (const auto& [alias, rule] : std::vector<std::pair<std::string, std::string>>{
           {"m-sync", "k-sync"}, {"fedbuff", "k-batch-async"}}) {
    INFO(alias);
    auto o = quick_options(alias, 6, 3, "exp:mean=5ms");
    o.clock = ClockKind::kVirtual;
    o.iterations = 80;
    const auto a = run_ok(o);
    o.rule.name = rule;
    const auto b = run_ok(o);
    REQUIRE(a.gradients.size() == b.gradients.size());
    for (std::size_t i = 0; i < a.gradients.size(); ++i) {
      CHECK(a.gradients[i].worker == b.gradients[i].worker);
      CHECK(a.gradients[i].iteration == b.gradients[i].iteration);
      CHECK(a.gradients[i].staleness == b.gradients[i].staleness);
    }
    CHECK(a.updates.back().wall_s == b.updates.back().wall_s);
    CHECK(rule_choices().find(alias) != std::string::npos);
  }
  CHECK(rule("m-sync", 4, 2)->name() == "m-sync");
}
