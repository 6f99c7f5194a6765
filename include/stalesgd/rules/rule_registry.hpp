// The rule registry: every rule --rule, experiment files, the theory and the help text know by
// name -- the built-in ones (docs/rules.md), a program's own and a plug-in's (register_rule). A
// rule is a state machine (rule.hpp) and one RuleInfo here, which declares its options and
// its constraints too; adding one is its file plus one line in the built-in list
// (docs/architecture.md, "Adding a rule").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stalesgd/rules/rule.hpp"
#include "stalesgd/rules/rule_option.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

class Distribution;

// A closed form of a rule's expected time per iteration E[T] (Dutta et al. 2018, §4): the value
// and the formula it came from.
struct ClosedForm {
  double seconds = 0.0;      // E[T] per iteration
  std::string formula;       // e.g. "(H_P - H_{P-K}) / mu"
  bool upper_bound = false;  // k-async under new-longer-than-used delays: E[T] <= this
};

// How a rule's K follows from --k and P.
enum class KChoice {
  kAllWorkers,  // K = P always (sync); --k may only repeat P
  kOne,         // K = 1 always (async); --k may only be 1
  kGiven,       // --k K is required, 1 <= K <= P (the k- rules)
};

// Every member has a default, so that a designated initializer may leave any out.
struct RuleInfo {
  std::string name{};     // --rule NAME: non-empty, no spaces, commas or ':'
  std::string summary{};  // one line for the help text and docs/cli.md
  // True when every update is made of gradients computed on the current parameters (staleness
  // always 0). Must agree with the state machine's Rule::synchronous().
  bool synchronous = false;
  KChoice k = KChoice::kGiven;
  // A fresh state machine for a resolved config (one per run: it holds the round's state).
  std::function<std::unique_ptr<Rule>(const RuleConfig&)> make{};
  // Optional: E[T] per iteration in closed form when every worker draws i.i.d. from the
  // distribution; nullopt where there is none. Without it the theory uses Monte Carlo alone.
  std::function<std::optional<ClosedForm>(const RuleConfig&, const Distribution&)> closed_form{};
  // Optional: E[T] per iteration in closed form when worker i's every minibatch takes times[i]
  // (StragglerProfile::fixed_times: the fixed computation model of Tyurin & Richtarik, NeurIPS
  // 2023); nullopt where there is none.
  std::function<std::optional<ClosedForm>(const RuleConfig&, std::span<const double> times)>
      fixed_form{};
  // The rule's own options (rule_option.hpp): they join train's option table, and
  // resolve_rule checks each given one's type and range before `resolve` sees them. An option
  // several rules declare (rennala's and ringmaster's --old-point) must be declared alike.
  std::vector<RuleOption> options{};
  // Optional: resolves --k and the rule's own options instead of `k` (ssp's --staleness-bound,
  // backup's --backups). A rule with one is left out of the theory's sweep over every rule.
  std::function<Result<RuleConfig>(const RuleSpec&, int workers)> resolve{};
  // Optional: the same rule for another number of workers (theory's scans over P), where the
  // default does not fit. The default keeps every flag and takes K as `k` says: P, 1, or the
  // rule's K where P allows it (at most P).
  std::function<Result<RuleConfig>(const RuleConfig&, int workers)> at_workers{};
  // Set when this rule is another registered rule under the name of a later paper (m-sync is
  // k-sync): the theory's sweep over every rule leaves it out, as it would repeat that one.
  std::string alias_of{};

  // The version of what the rule's save_state writes (rule_state.hpp): raise it when the
  // fields change, and read older versions in load_state, or a checkpoint of another version is
  // refused on resume.
  int state_version = 1;
  // What the rest of a run asks of the rule, instead of testing its name:
  bool needs_partition = false;  // its update means something only over workers that hold
                                 // different data: --partition is required (malenia)
  bool takes_adasync = false;    // --adasync-every may adapt its K (k-sync, k-async)
  bool lock_free = false;        // runs under --server hogwild, where no server collects
                                 // gradients (async)
  bool plain_sgd = false;        // --sequential runs it as plain SGD with P = 1 (sync)
  // Optional: the fix in the line that ends a run whose live workers are fewer than K
  // ("raise --backups to 3 or more"); the default is "lower --k to N or less".
  std::function<std::string(const RuleConfig&, int live)> fewer_workers_fix{};
  // Refuses, in one line, a run's delays that the rule cannot use (MindFlayer as published needs
  // each worker's delay distribution: Rule::use_delays). Unset: any delays.
  std::function<Status(const RuleConfig&, const StragglerProfile&)> check_delays{};
};

// Adds a rule under info.name, for every run of this process from then on (register before
// options are parsed: a rule's options join train's option table when it is next read).
// Refuses, in one line, an empty or malformed name, a name taken by a built-in or an earlier
// registration, a missing `make`, and an option that is malformed or declared otherwise by
// another rule.
Status register_rule(RuleInfo info);

// Grows by one with every registration: train's option table appends the new rules' options
// when it sees it change.
std::uint64_t rules_generation();

// The option `name` and the rules that declare it, in registration order; an empty list when no
// rule declares it.
std::vector<const RuleInfo*> rules_with_option(std::string_view name);

// "k-sync and k-async": the registered rules for which `has` holds, for messages that name the
// rules a flag or setting applies to (an alias is left out: its rule is named).
std::string rules_that(const std::function<bool(const RuleInfo&)>& has);

// The rule registered as `name`, or nullptr. The pointer stays valid for the process's life.
const RuleInfo* find_rule(std::string_view name);

// Every registered rule in order: the built-in ones as docs/rules.md lists them, then a
// program's own in the order it registered them.
std::vector<const RuleInfo*> registered_rules();

// "sync | k-sync | ... | backup": the names, for help texts; without the rules that have flags
// of their own (a resolve hook: ssp, backup) when `with_own_flags` is false.
std::string rule_choices(bool with_own_flags = true);

// `rule` (resolved for its own P) for `workers` workers, through its RuleInfo::at_workers or the
// default; an Error when the rule cannot run with that many (a K the rule needs beyond P).
Result<RuleConfig> rule_at_workers(const RuleConfig& rule, int workers);

// The rules a sweep over "every rule" takes (theory without --rule): those without a resolve
// hook that are no alias, sync-like and async-like ones once, the others at K = 1, 2, 4, ..., P.
std::vector<RuleSpec> every_rule_specs(int workers);

}  // namespace stalesgd
