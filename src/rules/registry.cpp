// Rule names, validation of P and K, and construction: adding a rule is one file and one line here.
#include <algorithm>

#include <fmt/format.h>

#include "rules/k_async.hpp"
#include "rules/k_batch_async.hpp"
#include "rules/k_batch_sync.hpp"
#include "rules/k_sync.hpp"

namespace stalesgd {

const std::vector<std::string>& rule_names() {
  static const std::vector<std::string> names{"sync",  "k-sync",  "k-batch-sync",
                                              "async", "k-async", "k-batch-async"};
  return names;
}

Result<std::unique_ptr<Rule>> make_rule(const RuleSpec& spec, int workers) {
  const auto& names = rule_names();
  if (std::find(names.begin(), names.end(), spec.name) == names.end()) {
    return Error{fmt::format("unknown rule '{}'; use one of: {}", spec.name, fmt::join(names, ", "))};
  }
  if (workers < 1) {
    return Error{fmt::format("--workers {} must be at least 1", workers)};
  }
  int k = spec.k;
  if (spec.name == "sync") {
    if (k != 0 && k != workers) {
      return Error{fmt::format("sync always waits for all P = {} workers, so --k {} does not apply; "
                               "use --rule k-sync --k {} or drop --k",
                               workers, k, k)};
    }
    return std::unique_ptr<Rule>(std::make_unique<KSync>(workers, workers, "sync"));
  }
  if (spec.name == "async") {
    if (k != 0 && k != 1) {
      return Error{fmt::format("async applies every gradient (K = 1), so --k {} does not apply; "
                               "use --rule k-async --k {} or drop --k",
                               k, k)};
    }
    return std::unique_ptr<Rule>(std::make_unique<KAsync>(workers, 1, "async"));
  }
  if (k == 0) {
    return Error{fmt::format("--rule {} needs --k K with 1 <= K <= P = {}", spec.name, workers)};
  }
  if (k < 1 || k > workers) {
    return Error{fmt::format("--k {} is out of range for --workers {}: K must satisfy 1 <= K <= P",
                             k, workers)};
  }
  if (spec.name == "k-sync") return std::unique_ptr<Rule>(std::make_unique<KSync>(workers, k));
  if (spec.name == "k-batch-sync") return std::unique_ptr<Rule>(std::make_unique<KBatchSync>(workers, k));
  if (spec.name == "k-async") return std::unique_ptr<Rule>(std::make_unique<KAsync>(workers, k));
  return std::unique_ptr<Rule>(std::make_unique<KBatchAsync>(workers, k));
}

}  // namespace stalesgd
