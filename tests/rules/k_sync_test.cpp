// k-sync and sync: K distinct fresh gradients per update, the rest cancelled, pushers wait.
#include "rules/rule_test_util.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

TEST_CASE("k-sync applies at the K-th fresh gradient and cancels the rest", "[rules]") {
  auto r = rule("k-sync", 4, 2);
  CHECK(r->synchronous());
  auto d1 = push(*r, 3, 0, 0);
  CHECK(d1.accept);
  CHECK_FALSE(d1.apply);
  CHECK(d1.next == AfterPush::kWait);
  CHECK(r->pending() == 1);
  auto d2 = push(*r, 1, 0, 0);
  CHECK(d2.accept);
  CHECK(d2.apply);
  CHECK(d2.cancel_in_flight);
  CHECK(r->pending() == 0);
  // A worker cancelled at that update may still land a gradient on version 0: discarded.
  auto late = push(*r, 0, 0, 1);
  CHECK_FALSE(late.accept);
  CHECK_FALSE(late.apply);
  CHECK(r->pending() == 0);
  // Next round: worker 3 may count again.
  CHECK_FALSE(push(*r, 3, 1, 1).apply);
  CHECK(push(*r, 0, 1, 1).apply);
}

TEST_CASE("k-sync treats a second push in one round as an engine bug", "[rules]") {
  auto r = rule("k-sync", 4, 3);
  (void)push(*r, 2, 0, 0);
  CHECK_THROWS_AS(push(*r, 2, 0, 0), std::logic_error);
}

TEST_CASE("sync is k-sync with K = P", "[rules]") {
  auto r = rule("sync", 3);
  CHECK(r->k() == 3);
  CHECK(r->name() == "sync");
  CHECK_FALSE(push(*r, 0, 0, 0).apply);
  CHECK_FALSE(push(*r, 2, 0, 0).apply);
  auto d = push(*r, 1, 0, 0);
  CHECK(d.apply);
  CHECK(d.cancel_in_flight);  // nobody is left computing, but the rule is the same
}

TEST_CASE("AdaSync can raise K between updates", "[rules]") {
  auto r = rule("k-sync", 8, 1);
  CHECK(push(*r, 0, 0, 0).apply);
  r->set_k(3);
  CHECK_FALSE(push(*r, 0, 1, 1).apply);
  CHECK_FALSE(push(*r, 1, 1, 1).apply);
  CHECK(push(*r, 2, 1, 1).apply);
}
