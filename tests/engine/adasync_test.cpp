// AdaSync: K starts at K0 and rises, every t0 seconds, as the training loss falls.
#include "engine/engine_test_util.hpp"
#include "support/sanitized.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

TEST_CASE("AdaSync raises K from K0 as the loss falls, never past P", "[engine][adasync]") {
  // On the virtual clock K's changes are single-threaded logic: under ThreadSanitizer one rule
  // checks the threads around it (the plain and ASan suites run both).
  const std::vector<std::string> rules = kThreadSanitized
                                             ? std::vector<std::string>{"k-async"}
                                             : std::vector<std::string>{"k-sync", "k-async"};
  for (const std::string& rule : rules) {
    INFO(rule);
    auto o = quick_options(rule, 8, 1, "exp:mean=10ms");
    o.clock = ClockKind::kVirtual;
    // softmax, not mlp: the loss falls far enough for K to triple in 20 virtual seconds,
    // at a third of the gradient cost (this test runs under the sanitizers too).
    o.adasync_every_s = 1.0;
    o.time_s = 20.0;
    const auto run = run_ok(o);
    int k = 1;
    double last_change = 0.0;
    for (const auto& u : run.updates) {
      CHECK(u.n_grads >= k);  // never falls
      CHECK(u.n_grads <= 8);
      if (u.n_grads > k) {
        // Changes happen at the first update after a multiple of t0.
        CHECK(u.wall_s - last_change >= 1.0 - 0.1);
        last_change = u.wall_s;
      }
      k = u.n_grads;
    }
    CHECK(run.updates.front().n_grads == 1);
    CHECK(k >= 3);
  }
}

TEST_CASE("AdaSync only applies to k-sync and k-async", "[engine][adasync]") {
  auto o = quick_options("async", 4, 0, "none");
  o.iterations = 5;
  o.adasync_every_s = 1.0;
  CHECK_FALSE(validate(o).ok());
  o.rule = {"k-async", 2};
  CHECK(validate(o).ok());
}
