// k-batch-sync: any K fresh minibatches (one worker may give several), pushers go on on w_j.
#include "rules/rule_test_util.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

TEST_CASE("k-batch-sync counts repeated workers and keeps them computing", "[rules]") {
  auto r = rule("k-batch-sync", 4, 3);
  CHECK(r->synchronous());
  auto d1 = push(*r, 1, 5, 5);
  CHECK(d1.accept);
  CHECK(d1.next == AfterPush::kContinue);
  CHECK_FALSE(push(*r, 1, 5, 5).apply);  // the same fast worker again
  auto d3 = push(*r, 1, 5, 5);
  CHECK(d3.apply);
  CHECK(d3.cancel_in_flight);
  CHECK_FALSE(push(*r, 2, 5, 6).accept);  // stale: cancelled work that raced the update
}
