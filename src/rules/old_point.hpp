// --old-point discard|interrupt, the option rennala and ringmaster share: what happens to the
// work an update makes old (docs/rules.md, "Rennala", "Ringmaster"). Declared once here, so the
// two registrations declare it alike.
#pragma once

#include "stalesgd/rules/rule.hpp"
#include "stalesgd/rules/rule_option.hpp"

namespace stalesgd {

inline RuleOption old_point_option() {
  return {.name = "old-point",
          .type = RuleOptionType::kChoice,
          .help = "discard | interrupt, the work an update makes old (default discard)",
          .choices = {"discard", "interrupt"}};
}

// True for --old-point interrupt; discard, the default, when it was not given.
inline bool interrupts_old_point(const RuleConfig& c) {
  return c.params.text("old-point", "discard") == "interrupt";
}

}  // namespace stalesgd
