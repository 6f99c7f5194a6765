// Rule names, validation of P and K, and construction: adding a rule is one file and one line here.
#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "rules/k_async.hpp"
#include "rules/k_batch_async.hpp"
#include "rules/k_batch_sync.hpp"
#include "rules/k_sync.hpp"
#include "rules/ssp.hpp"

namespace stalesgd {
namespace {

struct Named {
  RuleKind kind;
  const char* name;
};
constexpr std::array<Named, 7> kRules{{{RuleKind::kSync, "sync"},
                                       {RuleKind::kKSync, "k-sync"},
                                       {RuleKind::kKBatchSync, "k-batch-sync"},
                                       {RuleKind::kAsync, "async"},
                                       {RuleKind::kKAsync, "k-async"},
                                       {RuleKind::kKBatchAsync, "k-batch-async"},
                                       {RuleKind::kSsp, "ssp"}}};
// --rule backup: k-sync with K = P - b (docs/rules.md, "Backup workers"), no kind of its own.
constexpr std::string_view kBackup = "backup";

// --rule backup --backups b: Chen et al. 2016's sync with b backup workers, which is k-sync
// with K = P - b. A --k that says the same K is accepted (summary.json's config holds both).
Result<RuleConfig> resolve_backup(const RuleSpec& spec, int workers) {
  const int b = spec.backups;
  if (b == -1) {
    return Error{
        fmt::format("--rule backup needs --backups b, the workers the update does not wait for "
                    "(0 <= b < P = {}; K = P - b)",
                    workers)};
  }
  if (b < 0 || b >= workers) {
    return Error{fmt::format(
        "--backups {} is out of range for --workers {}: b must satisfy 0 <= b < P (K = P - b)", b,
        workers)};
  }
  if (spec.k != 0 && spec.k != workers - b) {
    return Error{fmt::format(
        "--rule backup --backups {} waits for K = P - b = {} gradients, so --k {} does not "
        "apply; drop --k or use --rule k-sync --k {}",
        b, workers - b, spec.k, spec.k)};
  }
  RuleConfig c{RuleKind::kKSync, workers, workers - b};
  c.backup = true;
  return c;
}

// --rule ssp --staleness-bound s (docs/rules.md, "SSP"): K = 1.
Result<RuleConfig> resolve_ssp(const RuleSpec& spec, int workers) {
  if (spec.staleness_bound == -1) {
    return Error{
        "--rule ssp needs --staleness-bound s, how many gradients a worker may run ahead of "
        "the slowest (0: lock-step)"};
  }
  if (spec.staleness_bound < 0) {
    return Error{fmt::format("--staleness-bound {} must be >= 0", spec.staleness_bound)};
  }
  if (spec.k != 0 && spec.k != 1) {
    return Error{fmt::format(
        "ssp applies every gradient (K = 1), so --k {} does not apply; drop --k", spec.k)};
  }
  RuleConfig c{RuleKind::kSsp, workers, 1};
  c.staleness_bound = spec.staleness_bound;
  return c;
}

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
  return Error{fmt::format("unknown rule '{}'; use one of: {}, {}", name,
                           fmt::join(rule_names(), ", "), kBackup)};
}

std::string_view RuleConfig::name() const {
  return backup ? kBackup : to_string(kind);
}

bool RuleConfig::synchronous() const {
  return kind == RuleKind::kSync || kind == RuleKind::kKSync || kind == RuleKind::kKBatchSync;
}

Result<RuleConfig> resolve_rule(const RuleSpec& spec, int workers) {
  const bool backup = spec.name == kBackup;
  auto kind = backup ? Result<RuleKind>(RuleKind::kKSync) : parse_rule_kind(spec.name);
  if (!kind) return kind.error();
  if (workers < 1) {
    return Error{fmt::format("--workers {} must be at least 1", workers)};
  }
  if (spec.staleness_bound != -1 && *kind != RuleKind::kSsp) {
    return Error{fmt::format("--staleness-bound applies to --rule ssp only, not {}", spec.name)};
  }
  if (spec.backups != -1 && !backup) {
    return Error{fmt::format("--backups applies to --rule backup only, not {}", spec.name)};
  }
  if (backup) return resolve_backup(spec, workers);
  if (*kind == RuleKind::kSsp) return resolve_ssp(spec, workers);
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
      return std::make_unique<KSync>(c.workers, c.k, std::string(c.name()));
    case RuleKind::kKBatchSync:
      return std::make_unique<KBatchSync>(c.workers, c.k);
    case RuleKind::kAsync:
      return std::make_unique<KAsync>(c.workers, 1, "async");
    case RuleKind::kKAsync:
      return std::make_unique<KAsync>(c.workers, c.k);
    case RuleKind::kKBatchAsync:
      return std::make_unique<KBatchAsync>(c.workers, c.k);
    case RuleKind::kSsp:
      return std::make_unique<Ssp>(c.workers, c.staleness_bound);
  }
  return nullptr;
}

}  // namespace stalesgd
