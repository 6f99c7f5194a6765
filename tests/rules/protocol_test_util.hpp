// Helpers for driving a RoundProtocol by hand in tests: a rule, the protocol around it and the
// server's version, and a readable view of a start list.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "rules/round_protocol.hpp"
#include "rules/rule_test_util.hpp"

namespace stalesgd::test {

// "0 1* 2": the workers of a start list in order, * marking the cut ones (readable on failure).
inline std::string starts(std::span<const RoundProtocol::Start> s) {
  std::string out;
  for (const auto& x : s) {
    if (!out.empty()) out += ' ';
    out += std::to_string(x.worker) + (x.cut ? "*" : "");
  }
  return out;
}

// A rule and the protocol around it (the protocol holds a reference to the rule).
struct ProtocolDriver {
  ProtocolDriver(const std::string& name, int workers, int k = 0)
      : rule(test::rule(name, workers, k)), protocol(*rule, workers) {}
  // A rule made with options of its own (rule_test_util.hpp's spec_with).
  ProtocolDriver(std::unique_ptr<Rule> made, int workers)
      : rule(std::move(made)), protocol(*rule, workers) {}
  std::unique_ptr<Rule> rule;
  RoundProtocol protocol;
  std::uint64_t version = 0;

  // Worker w's minibatch arrives, computed on the version the protocol started it on.
  RoundProtocol::Step push(int w) { return push(w, protocol.version_of(w)); }
  RoundProtocol::Step push(int w, std::uint64_t computed_on) {
    auto step = protocol.on_arrival(w, computed_on, version);
    if (step.decision.apply) ++version;
    return step;
  }
  // Worker w fails (docs/rules.md, "Failed workers").
  RoundProtocol::Retirement retire(int w) {
    auto r = protocol.retire(w, version);
    if (r.runs_on && r.step.decision.apply) ++version;
    return r;
  }
};

}  // namespace stalesgd::test
