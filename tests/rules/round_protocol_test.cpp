// RoundProtocol driven by hand for the six rules: who starts, who is cut, on which version, and
// the per-worker started/pushed/cancelled counts.
#include "rules/round_protocol.hpp"

#include <random>
#include <string>

#include "rules/protocol_test_util.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

namespace {

using Driven = test::ProtocolDriver;

}  // namespace

TEST_CASE("begin starts every worker in worker order on version 0", "[rules][protocol]") {
  const std::vector<std::pair<std::string, int>> rules{{"sync", 0},         {"k-sync", 2},
                                                       {"k-batch-sync", 2}, {"async", 0},
                                                       {"k-async", 2},      {"k-batch-async", 2}};
  for (const auto& [name, k] : rules) {
    INFO(name);
    Driven d(name, 4, k);
    CHECK(d.protocol.workers() == 4);
    for (int w = 0; w < 4; ++w) CHECK_FALSE(d.protocol.computing(w));
    CHECK(starts(d.protocol.begin()) == "0 1 2 3");
    for (int w = 0; w < 4; ++w) {
      CHECK(d.protocol.computing(w));
      CHECK(d.protocol.version_of(w) == 0);
      CHECK(d.protocol.started(w) == 1);
      CHECK(d.protocol.pushed(w) == 0);
      CHECK(d.protocol.cancelled(w) == 0);
    }
  }
}

TEST_CASE(
    "k-sync: the update restarts everyone in worker order and cuts the P - K still "
    "computing",
    "[rules][protocol]") {
  Driven d("k-sync", 4, 2);
  (void)d.protocol.begin();
  auto first = d.push(2);
  CHECK_FALSE(first.decision.apply);
  CHECK(first.decision.next == AfterPush::kWait);
  CHECK(first.start.empty());  // the pusher waits for the update
  CHECK_FALSE(d.protocol.computing(2));

  auto update = d.push(0);
  CHECK(update.decision.apply);
  CHECK(update.decision.cancel_in_flight);
  // 0 pushed, 2 waited: not cut; 1 and 3 were still computing: cut.
  CHECK(starts(update.start) == "0 1* 2 3*");
  for (int w = 0; w < 4; ++w) {
    CHECK(d.protocol.computing(w));
    CHECK(d.protocol.version_of(w) == 1);
    CHECK(d.protocol.started(w) == 2);
  }
  CHECK(d.protocol.cancelled(0) == 0);
  CHECK(d.protocol.cancelled(1) == 1);
  CHECK(d.protocol.cancelled(2) == 0);
  CHECK(d.protocol.cancelled(3) == 1);
  CHECK(d.protocol.pushed(0) == 1);
  CHECK(d.protocol.pushed(2) == 1);
}

TEST_CASE("sync: the P-th arrival starts all P, nobody is left to cut", "[rules][protocol]") {
  Driven d("sync", 3);
  (void)d.protocol.begin();
  CHECK(d.push(1).start.empty());
  CHECK(d.push(0).start.empty());
  auto update = d.push(2);
  CHECK(update.decision.apply);
  CHECK(starts(update.start) == "0 1 2");
  for (int w = 0; w < 3; ++w) CHECK(d.protocol.cancelled(w) == 0);
}

TEST_CASE(
    "k-batch-sync: an early pusher goes on at once on the same version, the update cuts "
    "the rest",
    "[rules][protocol]") {
  Driven d("k-batch-sync", 3, 3);
  (void)d.protocol.begin();
  auto a = d.push(1);
  CHECK_FALSE(a.decision.apply);
  CHECK(a.decision.next == AfterPush::kContinue);
  CHECK(starts(a.start) == "1");
  CHECK(d.protocol.version_of(1) == 0);  // same version: no update happened
  CHECK(d.protocol.computing(1));
  CHECK(starts(d.push(1).start) == "1");  // a fast worker gives several
  CHECK(d.protocol.started(1) == 3);

  auto update = d.push(0);
  CHECK(update.decision.apply);
  CHECK(update.decision.cancel_in_flight);
  // 1 restarted after its pushes and is computing again, so it is cut with 2.
  CHECK(starts(update.start) == "0 1* 2*");
  for (int w = 0; w < 3; ++w) CHECK(d.protocol.version_of(w) == 1);
  CHECK(d.protocol.cancelled(0) == 0);
  CHECK(d.protocol.cancelled(1) == 1);
  CHECK(d.protocol.cancelled(2) == 1);
}

TEST_CASE("async: every push is an update that restarts only the pusher", "[rules][protocol]") {
  Driven d("async", 3);
  (void)d.protocol.begin();
  auto a = d.push(1);
  CHECK(a.decision.apply);
  CHECK_FALSE(a.decision.cancel_in_flight);
  CHECK(starts(a.start) == "1");
  CHECK(d.protocol.version_of(1) == 1);
  CHECK(d.protocol.version_of(0) == 0);  // still computing on the old version
  CHECK(d.protocol.computing(0));
  auto b = d.push(0);  // stale by 1: async keeps it
  CHECK(b.decision.accept);
  CHECK(starts(b.start) == "0");
  CHECK(d.protocol.version_of(0) == 2);
  for (int w = 0; w < 3; ++w) CHECK(d.protocol.cancelled(w) == 0);
}

TEST_CASE("k-batch-async: pushers go on at once, the update cuts nobody", "[rules][protocol]") {
  Driven d("k-batch-async", 3, 2);
  (void)d.protocol.begin();
  auto a = d.push(2);
  CHECK_FALSE(a.decision.apply);
  CHECK(a.decision.next == AfterPush::kContinue);
  CHECK(starts(a.start) == "2");
  CHECK(d.protocol.version_of(2) == 0);
  auto update = d.push(2);  // any K gradients, repeats included
  CHECK(update.decision.apply);
  CHECK_FALSE(update.decision.cancel_in_flight);
  CHECK(starts(update.start) == "2");
  CHECK(d.protocol.version_of(2) == 1);
  CHECK(d.protocol.version_of(0) == 0);
  CHECK(d.protocol.computing(0));
  CHECK(d.protocol.computing(1));
  auto c = d.push(0);  // stale, kept
  CHECK(c.decision.accept);
  CHECK(starts(c.start) == "0");
  CHECK(d.protocol.version_of(0) == 1);
  for (int w = 0; w < 3; ++w) CHECK(d.protocol.cancelled(w) == 0);
}

TEST_CASE("k-async: pushers wait for the update, which starts them and the pusher, cutting none",
          "[rules][protocol]") {
  Driven d("k-async", 3, 2);
  (void)d.protocol.begin();
  auto a = d.push(1);
  CHECK_FALSE(a.decision.apply);
  CHECK(a.decision.next == AfterPush::kWait);
  CHECK(a.start.empty());
  CHECK_FALSE(d.protocol.computing(1));
  auto update = d.push(0);
  CHECK(update.decision.apply);
  CHECK_FALSE(update.decision.cancel_in_flight);
  CHECK(starts(update.start) == "0 1");
  CHECK(d.protocol.version_of(0) == 1);
  CHECK(d.protocol.version_of(1) == 1);
  CHECK(d.protocol.computing(2));  // keeps computing on the old version
  CHECK(d.protocol.version_of(2) == 0);

  auto stale = d.push(2);  // computed on 0, server at 1: counts
  CHECK(stale.decision.accept);
  CHECK(stale.start.empty());
  auto second = d.push(1);
  CHECK(second.decision.apply);
  CHECK(starts(second.start) == "1 2");
  CHECK(d.protocol.version_of(2) == 2);
  CHECK(d.protocol.computing(0));
  CHECK(d.protocol.version_of(0) == 1);
  for (int w = 0; w < 3; ++w) CHECK(d.protocol.cancelled(w) == 0);
}

TEST_CASE("k-sync: a stale gradient is rejected, counted as cancelled, and its worker restarts",
          "[rules][protocol]") {
  Driven d("k-sync", 3, 2);
  (void)d.protocol.begin();
  (void)d.push(0);
  (void)d.push(1);  // the update cuts 2 and restarts it on version 1
  REQUIRE(d.version == 1);
  REQUIRE(d.protocol.cancelled(2) == 1);
  // Its old minibatch, on version 0, raced the cut to the server (a real-clock race).
  auto late = d.push(2, 0);
  CHECK_FALSE(late.decision.accept);
  CHECK_FALSE(late.decision.apply);
  CHECK(starts(late.start) == "2");
  CHECK(d.protocol.cancelled(2) == 2);
  CHECK(d.protocol.pushed(2) == 1);
  CHECK(d.protocol.started(2) == 3);
  CHECK(d.protocol.computing(2));
  CHECK(d.protocol.version_of(2) == 1);
  CHECK(d.rule->pending() == 0);  // it does not count towards the next update
  CHECK(d.version == 1);
}

TEST_CASE("started, pushed and cancelled are exact over a scripted k-batch-sync run",
          "[rules][protocol]") {
  Driven d("k-batch-sync", 3, 2);
  (void)d.protocol.begin();
  // Version 0: worker 0 gives both gradients; 1 and 2 are cut.
  CHECK(starts(d.push(0).start) == "0");
  CHECK(starts(d.push(0).start) == "0 1* 2*");
  // Version 1: 1 then 2; 0 and the restarted 1 are cut.
  CHECK(starts(d.push(1).start) == "1");
  CHECK(starts(d.push(2).start) == "0* 1* 2");
  // Version 2: 2 twice.
  CHECK(starts(d.push(2).start) == "2");
  CHECK(starts(d.push(2).start) == "0* 1* 2");
  CHECK(d.version == 3);
  const std::uint64_t started[] = {5, 5, 5};
  const std::uint64_t pushed[] = {2, 1, 3};
  const std::uint64_t cancelled[] = {2, 3, 1};
  for (int w = 0; w < 3; ++w) {
    INFO("worker " << w);
    CHECK(d.protocol.started(w) == started[w]);
    CHECK(d.protocol.pushed(w) == pushed[w]);
    CHECK(d.protocol.cancelled(w) == cancelled[w]);
    CHECK(d.protocol.version_of(w) == 3);
  }
}

TEST_CASE("every minibatch started is pushed, cancelled or still computing, for every rule",
          "[rules][protocol]") {
  const std::vector<std::pair<std::string, int>> rules{{"sync", 0},         {"k-sync", 3},
                                                       {"k-batch-sync", 3}, {"async", 0},
                                                       {"k-async", 3},      {"k-batch-async", 3}};
  for (const auto& [name, k] : rules) {
    INFO(name);
    Driven d(name, 5, k);
    (void)d.protocol.begin();
    std::mt19937 rng(11);
    std::uint64_t updates = 0;
    for (int i = 0; i < 400; ++i) {
      // A random computing worker delivers, as an engine carrying out every cut would.
      std::vector<int> computing;
      for (int w = 0; w < 5; ++w) {
        if (d.protocol.computing(w)) computing.push_back(w);
      }
      REQUIRE_FALSE(computing.empty());
      const int w =
          computing[std::uniform_int_distribution<std::size_t>(0, computing.size() - 1)(rng)];
      const auto step = d.push(w);
      CHECK(step.decision.accept);  // the cuts carried out, nothing stale reaches a sync rule
      for (const auto& s : step.start) CHECK(d.protocol.version_of(s.worker) == d.version);
      if (step.decision.apply) ++updates;
    }
    CHECK(updates == d.version);
    CHECK(updates > 0);
    for (int w = 0; w < 5; ++w) {
      const std::uint64_t in_flight = d.protocol.computing(w) ? 1 : 0;
      CHECK(d.protocol.started(w) == d.protocol.pushed(w) + d.protocol.cancelled(w) + in_flight);
    }
  }
}
