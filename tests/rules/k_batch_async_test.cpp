// k-batch-async: any K gradients, stale and repeated ones included; pushers go on.
#include "rules/rule_test_util.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

TEST_CASE("k-batch-async applies at every K-th gradient whoever sends it", "[rules]") {
  auto r = rule("k-batch-async", 3, 2);
  auto d1 = push(*r, 0, 0, 0);
  CHECK(d1.next == AfterPush::kContinue);
  CHECK_FALSE(d1.apply);
  auto d2 = push(*r, 0, 0, 0);  // the same worker twice
  CHECK(d2.apply);
  CHECK_FALSE(d2.cancel_in_flight);
  CHECK(push(*r, 2, 0, 1).accept);  // stale
}
