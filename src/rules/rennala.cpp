// Rennala SGD (Tyurin & Richtarik, NeurIPS 2023, Method 4; docs/rules.md, "Rennala"): the server
// collects S = --k gradients computed at the current point, from any workers (a fast worker may
// give several), and steps with their mean; a gradient computed at an older point is discarded
// and its worker starts again on the current point. As published the workers are not
// interrupted when the point moves on (`--old-point discard`, the default): each finishes what
// it computes and learns then that it is old. `--old-point interrupt` cuts that work at the
// update instead, which is the paper's K-batch-sync. Staleness is always 0. S may exceed P.
#include <fmt/format.h>

#include "rules/k_batch_sync.hpp"
#include "rules/old_point.hpp"
#include "stalesgd/rules/rule_registry.hpp"
#include "stalesgd/straggler/order_statistics.hpp"

namespace stalesgd {
namespace {

Result<RuleConfig> resolve_rennala(const RuleSpec& spec, int workers) {
  if (spec.k == 0) {
    return Error{
        "--rule rennala needs --k S, the gradients at the current point per update (S >= 1; "
        "the paper's choice is about sigma^2 / epsilon)"};
  }
  if (spec.k < 1) return Error{fmt::format("--k {} must be at least 1 (S >= 1)", spec.k)};
  return RuleConfig{"rennala", workers, spec.k, spec.params};
}

}  // namespace

RuleInfo rennala_rule() {
  return {.name = "rennala",
          .summary = "Rennala SGD: S = --k fresh gradients from any workers, old ones discarded",
          .synchronous = true,
          .k = KChoice::kGiven,
          .make = [](const RuleConfig& c) -> std::unique_ptr<Rule> {
            return std::make_unique<KBatchSync>(c.workers, c.k, "rennala", interrupts_old_point(c));
          },
          // Interrupted, each round restarts every worker: the S-th finish of them all. As
          // published (discard), a round starts with the work the last one left: Monte Carlo.
          .fixed_form = [](const RuleConfig& c,
                           std::span<const double> times) -> std::optional<ClosedForm> {
            if (!interrupts_old_point(c)) return std::nullopt;
            return ClosedForm{kth_finish(times, c.k),
                              "the S-th finish of all workers started together"};
          },
          .options = {old_point_option()},
          .resolve = resolve_rennala,
          .at_workers = [](RuleConfig c, int workers) -> Result<RuleConfig> {
            c.workers = workers;  // S may exceed P
            return c;
          }};
}

}  // namespace stalesgd
