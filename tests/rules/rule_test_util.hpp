// Helpers for driving a Rule by hand in tests.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "stalesgd/rules/rule.hpp"
#include "support/fixtures.hpp"

namespace stalesgd::test {

// A RuleSpec with one of the rule's own options: spec_with("ssp", 0, "staleness-bound", 3).
inline RuleSpec spec_with(std::string name, int k, std::string option, RuleValue value) {
  RuleSpec spec{std::move(name), k, {}};
  spec.params.set(std::move(option), std::move(value));
  return spec;
}
inline RuleSpec spec_with(std::string name, int k, std::string option, std::int64_t value) {
  return spec_with(std::move(name), k, std::move(option), RuleValue{value});
}
inline RuleSpec spec_with(std::string name, int k, std::string option, int value) {
  return spec_with(std::move(name), k, std::move(option), RuleValue{std::int64_t{value}});
}
inline RuleSpec spec_with(std::string name, int k, std::string option, const char* value) {
  return spec_with(std::move(name), k, std::move(option), RuleValue{std::string(value)});
}

inline std::unique_ptr<Rule> rule(const std::string& name, int workers, int k = 0) {
  auto config = resolve_rule({name, k}, workers);
  REQUIRE(config.ok());
  return make_rule(*config);
}

inline Decision push(Rule& r, int worker, std::uint64_t computed_on, std::uint64_t current) {
  return r.on_gradient({worker, computed_on, current});
}

// `stalesgd train --iterations 5 FLAGS` for each case: bad input, so exit 2 and one line that
// says `expected`.
using BadFlags = std::vector<std::pair<std::vector<std::string>, std::string>>;
inline void check_bad_train_flags(const BadFlags& cases) {
  for (const auto& [flags, expected] : cases) {
    std::vector<std::string> args{"train", "--iterations", "5", "--no-progress"};
    args.insert(args.end(), flags.begin(), flags.end());
    auto r = run_cli(args);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.output) == 1);
    CHECK_THAT(r.output, Catch::Matchers::Contains(expected));
  }
}

}  // namespace stalesgd::test
