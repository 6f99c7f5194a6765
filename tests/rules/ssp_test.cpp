// Stale-synchronous parallel and backup workers (docs/rules.md, "Baselines"): resolution and
// its one-line errors, and the SSP gate driven by hand through the round protocol.
#include <string>

#include "rules/protocol_test_util.hpp"
#include "rules/round_protocol.hpp"
#include "rules/ssp.hpp"
#include "util/state_stream.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

namespace {

RuleConfig ssp_config(int workers, std::int64_t s) {
  auto c = resolve_rule(spec_with("ssp", 0, "staleness-bound", s), workers);
  REQUIRE(c.ok());
  return *c;
}

// An SSP rule and the protocol around it, every worker started.
struct SspDriver {
  SspDriver(int workers, std::int64_t s)
      : rule(make_rule(ssp_config(workers, s))), protocol(*rule, workers) {
    (void)protocol.begin();
  }
  std::unique_ptr<Rule> rule;
  RoundProtocol protocol;
  std::uint64_t version = 0;

  std::string push(int w) {
    const auto step = protocol.on_arrival(w, protocol.version_of(w), version);
    CHECK(step.decision.accept);
    CHECK(step.decision.apply);  // every gradient is an update
    ++version;
    return starts(step.start);
  }
  std::string retire(int w) {
    const auto r = protocol.retire(w, version);
    CHECK(r.runs_on);
    CHECK_FALSE(r.step.decision.apply);
    return starts(r.step.start);
  }
};

}  // namespace

TEST_CASE("ssp and backup: resolution and one-line errors", "[rules][ssp][backup]") {
  CHECK_THAT(resolve_rule({"ssp", 0}, 4).error().message,
             Contains("--rule ssp needs --staleness-bound"));
  CHECK_THAT(resolve_rule(spec_with("ssp", 0, "staleness-bound", -3), 4).error().message,
             Contains("--staleness-bound must be an integer s with 0 <= s"));
  CHECK_THAT(resolve_rule(spec_with("ssp", 2, "staleness-bound", 1), 4).error().message,
             Contains("K = 1"));
  CHECK_THAT(resolve_rule(spec_with("async", 0, "staleness-bound", 1), 4).error().message,
             Contains("--staleness-bound applies to --rule ssp only"));
  const auto ssp = resolve_rule(spec_with("ssp", 1, "staleness-bound", 3),
                                4);  // --k 1 as summary.json records it
  REQUIRE(ssp.ok());
  CHECK(ssp->rule == "ssp");
  CHECK(ssp->k == 1);
  CHECK(ssp->params.integer("staleness-bound", -1) == 3);
  CHECK_FALSE(ssp->synchronous());
  CHECK(make_rule(*ssp)->name() == "ssp");

  CHECK_THAT(resolve_rule({"backup", 0}, 4).error().message,
             Contains("--rule backup needs --backups"));
  CHECK_THAT(resolve_rule(spec_with("backup", 0, "backups", 4), 4).error().message,
             Contains("--backups 4 is out of range for --workers 4"));
  CHECK_THAT(resolve_rule(spec_with("backup", 0, "backups", -2), 4).error().message,
             Contains("--backups must be an integer b with 0 <= b < P"));
  CHECK_THAT(resolve_rule(spec_with("backup", 2, "backups", 1), 4).error().message,
             Contains("K = P - b = 3") && Contains("drop --k"));
  CHECK_THAT(resolve_rule(spec_with("k-sync", 2, "backups", 1), 4).error().message,
             Contains("--backups applies to --rule backup only"));
  CHECK_THAT(resolve_rule({"nope", 0}, 4).error().message, Contains("ssp, backup"));
  for (const int k : {0, 3}) {  // --k P - b is what summary.json records
    const auto backup = resolve_rule(spec_with("backup", k, "backups", 1), 4);
    REQUIRE(backup.ok());
    CHECK(backup->rule == "backup");  // k-sync's state machine, under its own registration
    CHECK(backup->k == 3);
    CHECK(backup->params.integer("backups", -1) == 1);
    CHECK(backup->name() == "backup");
    CHECK(backup->synchronous());
    CHECK(make_rule(*backup)->name() == "backup");
  }
  CHECK(resolve_rule(spec_with("backup", 0, "backups", 0), 4)->k == 4);  // no backups: sync
}

TEST_CASE("ssp s = 0: a worker that pushed waits for the slowest, then all go", "[rules][ssp]") {
  SspDriver d(3, 0);
  CHECK(d.push(1).empty());  // 1 is one ahead of 0 and 2: held
  CHECK(d.protocol.held(1));
  CHECK_FALSE(d.protocol.computing(1));
  CHECK(d.push(2).empty());
  CHECK(d.push(0) == "0 1 2");  // the slowest caught up: everyone on the new version
  CHECK(d.protocol.version_of(1) == 3);
  CHECK_FALSE(d.protocol.held(1));
  CHECK(d.protocol.started(1) == 2);
}

TEST_CASE("ssp s = 2: a worker runs at most s + 1 gradients ahead", "[rules][ssp]") {
  SspDriver d(2, 2);
  CHECK(d.push(1) == "1");
  CHECK(d.push(1) == "1");
  CHECK(d.push(1).empty());  // 3 ahead of worker 0's 0: may not start a fourth
  CHECK(d.protocol.held(1));
  CHECK(d.push(0) == "0 1");  // 3 - 1 = 2 <= s: go
  const auto& ssp = static_cast<const Ssp&>(*d.rule);
  CHECK(ssp.pushed(1) == 3);
  CHECK(ssp.slowest() == 1);
}

TEST_CASE("ssp: the bound is against the slowest live worker", "[rules][ssp][failures]") {
  SspDriver d(3, 0);
  CHECK(d.push(1).empty());
  CHECK(d.push(2).empty());
  CHECK(d.retire(0) == "1 2");  // the straggler failed: the others go on without it
  CHECK(d.protocol.live() == 2);
  CHECK(d.push(2).empty());  // now 2 is ahead of 1
  d.protocol.retire(1, d.version);
  CHECK(d.protocol.held(2) == false);
  CHECK(d.protocol.computing(2));
  // A held worker that fails leaves the gate's count.
  SspDriver e(2, 0);
  CHECK(e.push(1).empty());
  CHECK(e.retire(1).empty());
  CHECK(e.push(0) == "0");
}

TEST_CASE("ssp: a checkpoint keeps the counts and who is held", "[rules][ssp][resume]") {
  SspDriver d(3, 1);
  (void)d.push(2);
  (void)d.push(2);  // 2 is held: 2 ahead of 0 and 1
  (void)d.retire(1);
  StateWriter out;
  d.rule->save(out);
  d.protocol.save(out);
  SspDriver e(3, 1);
  StateReader in(out.bytes());
  e.rule->load(in);
  e.protocol.load(in);
  REQUIRE(in.ok());
  CHECK(e.protocol.held(2));
  CHECK(e.protocol.retired(1));
  const auto& ssp = static_cast<const Ssp&>(*e.rule);
  CHECK(ssp.pushed(2) == 2);
  CHECK(ssp.slowest() == 0);
  e.version = d.version;
  CHECK(e.push(0) == "0 2");  // the restored gate lets 2 go once 0 catches up
  // A real-clock resume starts afresh, and the gate holds again whom it held.
  SspDriver f(3, 0);
  (void)f.push(1);
  f.protocol.restart(f.version, {});
  CHECK(starts(f.protocol.begin()) == "0 2");
  CHECK(f.protocol.held(1));
}
