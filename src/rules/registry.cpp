// Rule names, validation of P and K, and construction: adding a rule is one file and one line here.
#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "rules/k_async.hpp"
#include "rules/k_batch_async.hpp"
#include "rules/k_batch_sync.hpp"
#include "rules/k_sync.hpp"

namespace stalesgd {
namespace {

struct Named {
  RuleKind kind;
  const char* name;
};
constexpr std::array<Named, 6> kRules{{{RuleKind::kSync, "sync"},
                                       {RuleKind::kKSync, "k-sync"},
                                       {RuleKind::kKBatchSync, "k-batch-sync"},
                                       {RuleKind::kAsync, "async"},
                                       {RuleKind::kKAsync, "k-async"},
                                       {RuleKind::kKBatchAsync, "k-batch-async"}}};

}  // namespace

const std::vector<std::string>& rule_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& r : kRules) v.emplace_back(r.name);
    return v;
  }();
  return names;
}

std::string_view to_string(RuleKind kind) {
  for (const auto& r : kRules) {
    if (r.kind == kind) return r.name;
  }
  return "?";
}

Result<RuleKind> parse_rule_kind(std::string_view name) {
  for (const auto& r : kRules) {
    if (name == r.name) return r.kind;
  }
  return Error{
      fmt::format("unknown rule '{}'; use one of: {}", name, fmt::join(rule_names(), ", "))};
}

bool RuleConfig::synchronous() const {
  return kind == RuleKind::kSync || kind == RuleKind::kKSync || kind == RuleKind::kKBatchSync;
}

Result<RuleConfig> resolve_rule(const RuleSpec& spec, int workers) {
  auto kind = parse_rule_kind(spec.name);
  if (!kind) return kind.error();
  if (workers < 1) {
    return Error{fmt::format("--workers {} must be at least 1", workers)};
  }
  const int k = spec.k;
  if (*kind == RuleKind::kSync) {
    if (k != 0 && k != workers) {
      return Error{
          fmt::format("sync always waits for all P = {} workers, so --k {} does not apply; "
                      "use --rule k-sync --k {} or drop --k",
                      workers, k, k)};
    }
    return RuleConfig{*kind, workers, workers};
  }
  if (*kind == RuleKind::kAsync) {
    if (k != 0 && k != 1) {
      return Error{
          fmt::format("async applies every gradient (K = 1), so --k {} does not apply; "
                      "use --rule k-async --k {} or drop --k",
                      k, k)};
    }
    return RuleConfig{*kind, workers, 1};
  }
  if (k == 0) {
    return Error{fmt::format("--rule {} needs --k K with 1 <= K <= P = {}", spec.name, workers)};
  }
  if (k < 1 || k > workers) {
    return Error{fmt::format("--k {} is out of range for --workers {}: K must satisfy 1 <= K <= P",
                             k, workers)};
  }
  return RuleConfig{*kind, workers, k};
}

std::unique_ptr<Rule> make_rule(const RuleConfig& c) {
  switch (c.kind) {
    case RuleKind::kSync:
      return std::make_unique<KSync>(c.workers, c.workers, "sync", /*k_is_live=*/true);
    case RuleKind::kKSync:
      return std::make_unique<KSync>(c.workers, c.k);
    case RuleKind::kKBatchSync:
      return std::make_unique<KBatchSync>(c.workers, c.k);
    case RuleKind::kAsync:
      return std::make_unique<KAsync>(c.workers, 1, "async");
    case RuleKind::kKAsync:
      return std::make_unique<KAsync>(c.workers, c.k);
    case RuleKind::kKBatchAsync:
      return std::make_unique<KBatchAsync>(c.workers, c.k);
  }
  return nullptr;
}

}  // namespace stalesgd
