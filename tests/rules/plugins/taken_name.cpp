// A plug-in whose rule takes a built-in rule's name: its registration fails, in one line.
#include <memory>

#include <stalesgd/plugin.hpp>
#include <stalesgd/rules/rule_registry.hpp>

namespace {

stalesgd::Status register_taken() {
  return stalesgd::register_rule(
      {.name = "k-async",
       .summary = "a second k-async",
       .make = [](const stalesgd::RuleConfig&) -> std::unique_ptr<stalesgd::Rule> {
         return nullptr;
       }});
}

}  // namespace

STALESGD_PLUGIN(register_taken)
