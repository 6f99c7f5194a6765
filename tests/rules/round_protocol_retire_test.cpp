// RoundProtocol::retire and the rules' answer to a failed worker (docs/rules.md, "Failed
// workers"), driven by hand: sync's K follows the live workers, the K-distinct rules need K
// live ones, the k-batch rules one.
#include <string>

#include "rules/protocol_test_util.hpp"
#include "rules/round_protocol.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

namespace {

// A driver whose workers have all started (begin()).
struct Driven : test::ProtocolDriver {
  Driven(const std::string& name, int workers, int k = 0) : ProtocolDriver(name, workers, k) {
    (void)protocol.begin();
  }
};

}  // namespace

TEST_CASE("retire: sync completes the round the failed worker held up",
          "[rules][protocol][failures]") {
  Driven d("sync", 4);
  CHECK(d.push(0).start.empty());
  CHECK(d.push(2).start.empty());
  CHECK(d.push(1).start.empty());
  // Worker 3 never delivers: once it is retired the round of the other three is complete.
  auto r = d.retire(3);
  CHECK(r.runs_on);
  CHECK(r.step.decision.apply);
  CHECK(starts(r.step.start) == "0 1 2");
  CHECK(d.version == 1);
  CHECK(d.protocol.retired(3));
  CHECK_FALSE(d.protocol.computing(3));
  CHECK(d.protocol.cancelled(3) == 1);  // its minibatch in flight is lost
  CHECK(d.protocol.live() == 3);
  CHECK(d.rule->k() == 3);
  // The next rounds take the three live workers.
  CHECK_FALSE(d.push(1).decision.apply);
  CHECK_FALSE(d.push(0).decision.apply);
  auto update = d.push(2);
  CHECK(update.decision.apply);
  CHECK(starts(update.start) == "0 1 2");  // 3 is never started again
  CHECK(d.protocol.started(3) == 1);
  // Retiring it again changes nothing.
  auto again = d.retire(3);
  CHECK(again.runs_on);
  CHECK(again.step.start.empty());
  CHECK(d.protocol.cancelled(3) == 1);
}

TEST_CASE("retire: sync keeps a failed worker's delivered gradient and still awaits every live one",
          "[rules][protocol][failures]") {
  Driven d("sync", 4);
  CHECK(d.push(0).start.empty());
  auto r = d.retire(0);  // it delivered, then failed while waiting for the update
  CHECK(r.runs_on);
  CHECK_FALSE(r.step.decision.apply);
  CHECK(d.protocol.cancelled(0) == 0);
  CHECK_FALSE(d.push(1).decision.apply);
  CHECK_FALSE(d.push(2).decision.apply);
  auto update = d.push(3);  // nobody is cut: this round had 4 gradients
  CHECK(update.decision.apply);
  CHECK(starts(update.start) == "1 2 3");
  CHECK(d.rule->k() == 3);
  CHECK_FALSE(d.push(3).decision.apply);
  CHECK_FALSE(d.push(1).decision.apply);
  CHECK(d.push(2).decision.apply);
}

TEST_CASE("retire: sync runs on down to its last worker", "[rules][protocol][failures]") {
  Driven d("sync", 2);
  CHECK(d.retire(0).runs_on);
  CHECK(d.push(1).decision.apply);
  CHECK(d.push(1).decision.apply);
  CHECK_FALSE(d.retire(1).runs_on);
  CHECK(d.protocol.live() == 0);
}

TEST_CASE("retire: k-sync and k-async need K live workers", "[rules][protocol][failures]") {
  for (const char* name : {"k-sync", "k-async"}) {
    INFO(name);
    Driven d(name, 4, 3);
    auto r = d.retire(2);
    CHECK(r.runs_on);
    CHECK_FALSE(r.step.decision.apply);
    CHECK(d.rule->k() == 3);  // fixed
    CHECK_FALSE(d.push(0).decision.apply);
    CHECK_FALSE(d.push(1).decision.apply);
    auto update = d.push(3);
    CHECK(update.decision.apply);
    CHECK(starts(update.start).find('2') == std::string::npos);
    CHECK_FALSE(d.retire(1).runs_on);  // 2 live < K = 3
  }
  Driven full("k-sync", 4, 4);  // K = P does not follow the live workers: that is sync
  CHECK_FALSE(full.retire(0).runs_on);
}

TEST_CASE("retire: async and the k-batch rules run on with one live worker",
          "[rules][protocol][failures]") {
  for (const auto& [name, k] : std::vector<std::pair<std::string, int>>{
           {"async", 0}, {"k-batch-async", 3}, {"k-batch-sync", 3}}) {
    INFO(name);
    Driven d(name, 3, k);
    CHECK(d.retire(0).runs_on);
    CHECK(d.retire(2).runs_on);
    // Worker 1 alone gives every gradient.
    const std::uint64_t before = d.version;
    for (int i = 0; i < 3 * std::max(k, 1); ++i) d.push(1);
    CHECK(d.version >= before + 3);
    CHECK(d.protocol.started(0) == 1);
    CHECK(d.protocol.started(2) == 1);
    CHECK_FALSE(d.retire(1).runs_on);
  }
}
