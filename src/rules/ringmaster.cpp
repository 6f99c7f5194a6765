#include "rules/ringmaster.hpp"
#include "rules/old_point.hpp"

#include <fmt/format.h>

#include "stalesgd/rules/rule_registry.hpp"

namespace stalesgd {

Decision Ringmaster::on_gradient(const Arrival& a) {
  Decision d;
  d.next = AfterPush::kContinue;  // applied or ignored, the worker goes on with the current x
  const auto delay = static_cast<std::int64_t>(a.current - a.computed_on);
  if (delay >= threshold_) {
    d.accept = false;  // Algorithm 1: "ignore the outdated gradient"
    return d;
  }
  d.apply = true;
  return d;
}

namespace {

// --rule ringmaster --staleness-threshold R: K = 1.
Result<RuleConfig> resolve_ringmaster(const RuleSpec& spec, int workers) {
  if (!spec.params.has("staleness-threshold")) {
    return Error{
        "--rule ringmaster needs --staleness-threshold R: a gradient computed R or more updates "
        "ago is ignored (R >= 1; the paper's choice is about sigma^2 / epsilon)"};
  }
  if (spec.k != 0 && spec.k != 1) {
    return Error{fmt::format(
        "ringmaster applies every gradient it keeps (K = 1), so --k {} does not apply; drop --k",
        spec.k)};
  }
  return RuleConfig{"ringmaster", workers, 1, spec.params};
}

}  // namespace

RuleInfo ringmaster_rule() {
  return {.name = "ringmaster",
          .summary = "Ringmaster ASGD: async, ignoring gradients R or more updates stale",
          .synchronous = false,
          .k = KChoice::kOne,
          .make = [](const RuleConfig& c) -> std::unique_ptr<Rule> {
            return std::make_unique<Ringmaster>(
                c.workers, c.params.integer("staleness-threshold", 1), interrupts_old_point(c));
          },
          .options = {{.name = "staleness-threshold",
                       .help = "a gradient R or more updates stale is ignored, R >= 1",
                       .min = 1,
                       .max = 1'000'000'000,
                       .expects = "an integer R with 1 <= R <= 1000000000"},
                      old_point_option()},
          .resolve = resolve_ringmaster};
}

}  // namespace stalesgd
