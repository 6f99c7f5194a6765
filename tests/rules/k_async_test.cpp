// k-async and async: K distinct workers per update, stale gradients count, no cancellation.
#include "rules/rule_test_util.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

TEST_CASE("k-async accepts stale gradients from distinct workers", "[rules]") {
  auto r = rule("k-async", 4, 2);
  CHECK_FALSE(r->synchronous());
  auto d1 = push(*r, 0, 3, 7);  // staleness 4: still counts
  CHECK(d1.accept);
  CHECK_FALSE(d1.apply);
  CHECK(d1.next == AfterPush::kWait);
  auto d2 = push(*r, 2, 7, 7);
  CHECK(d2.accept);
  CHECK(d2.apply);
  CHECK_FALSE(d2.cancel_in_flight);
  CHECK_THROWS_AS((push(*r, 1, 8, 8), push(*r, 1, 8, 8)), std::logic_error);
}

TEST_CASE("async applies every gradient and the pusher goes on", "[rules]") {
  auto r = rule("async", 5);
  CHECK(r->k() == 1);
  for (int w = 0; w < 5; ++w) {
    auto d = push(*r, w, 0, static_cast<std::uint64_t>(w));
    CHECK(d.accept);
    CHECK(d.apply);
    CHECK_FALSE(d.cancel_in_flight);
  }
}
