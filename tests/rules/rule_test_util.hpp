// Helpers for driving a Rule by hand in tests.
#pragma once

#include <memory>

#include <catch2/catch.hpp>

#include "stalesgd/rules/rule.hpp"

namespace stalesgd::test {

inline std::unique_ptr<Rule> rule(const std::string& name, int workers, int k = 0) {
  auto config = resolve_rule({name, k}, workers);
  REQUIRE(config.ok());
  return make_rule(*config);
}

inline Decision push(Rule& r, int worker, std::uint64_t computed_on, std::uint64_t current) {
  return r.on_gradient({worker, computed_on, current});
}

}  // namespace stalesgd::test
