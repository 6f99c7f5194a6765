// A plug-in whose rule declares an option named as one of train's own (--batch): refused in
// one line, though its registration itself succeeds.
#include <memory>

#include <stalesgd/plugin.hpp>
#include <stalesgd/rules/rule_registry.hpp>

namespace {

stalesgd::Status register_clashing() {
  return stalesgd::register_rule(
      {.name = "batchy",
       .summary = "a rule with an option of train's",
       .make = [](const stalesgd::RuleConfig&) -> std::unique_ptr<stalesgd::Rule> {
         return nullptr;
       },
       .options = {{.name = "batch", .help = "the minibatch, again", .min = 1, .max = 10}}});
}

}  // namespace

STALESGD_PLUGIN(register_clashing)
