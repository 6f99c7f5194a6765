// fedbuff: buffered asynchronous aggregation (Nguyen et al., "Federated Learning with Buffered
// Asynchronous Aggregation", AISTATS 2022): the server buffers any K client updates, stale ones
// included, and applies their mean. That is the paper's K-batch-async, registered under the name
// its readers know (docs/rules.md, "The field since 2018"). FedBuff's clients run local steps:
// --local-steps Q with --local-lr, the server then applying the mean change with --lr, its
// server step size (model/local_steps.hpp); without them a client's job is one gradient.
#include "stalesgd/rules/rule_registry.hpp"

namespace stalesgd {

RuleInfo k_batch_async_rule();

RuleInfo fedbuff_rule() {
  RuleInfo info = k_batch_async_rule();
  info.name = "fedbuff";
  info.alias_of = "k-batch-async";
  info.summary =
      "FedBuff: k-batch-async by its 2022 name, any K = --k buffered client updates (with "
      "--local-steps Q and --local-lr its clients' local SGD, --lr the server step size)";
  return info;
}

}  // namespace stalesgd
