// Rule: one K-of-P aggregation rule of Dutta et al. 2018 (§1 of docs/rules.md), or a baseline
// (SSP, backup workers; docs/rules.md, "Baselines"), as a small
// deterministic state machine. An engine (real threads, virtual time) reports each gradient
// that reaches the server; the rule answers whether to keep it, whether the update is due, who
// is cancelled, and what the pushing worker does next. The rule never sees parameters or time,
// so the same rule code drives every engine and is unit-testable without threads.
//
// Thread safety: not thread-safe; only the server (one thread) calls a Rule.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "stalesgd/rules/rule_option.hpp"
#include "stalesgd/rules/rule_state.hpp"
#include "stalesgd/straggler/time_limit.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

// A checkpoint's streams (private to the library: util/state_stream.hpp in src/).
class StateWriter;
class StateReader;
class StragglerProfile;

// A gradient that reached the server.
struct Arrival {
  int worker = 0;
  std::uint64_t computed_on = 0;  // parameter version the worker read
  std::uint64_t current = 0;      // server's version now (before any update this arrival causes)
  // Under a time limit (Rule::budget): the attempts this push stands for, the abandoned ones
  // first; `abandoned` when every one of them was, so that the push carries no gradient.
  int attempts = 1;
  bool abandoned = false;
};

// What the worker that pushed does next, when its push did not complete the update.
enum class AfterPush {
  kContinue,  // pull the current parameters at once and start another minibatch
  kWait,      // block until the next update, then pull the new parameters
};

struct Decision {
  bool accept = true;  // false: discarded (stale in a synchronous rule, or an abandoned attempt)
  bool apply = false;  // the K-set is complete: apply the update now (with !accept: without
                       // this push; a round may end with no gradient, a zero step)
  bool cancel_in_flight = false;  // with apply: every worker still computing is interrupted and
                                  // restarts on the new version
  AfterPush next =
      AfterPush::kContinue;  // with apply, the pusher starts on the new version either way
};

class Rule {
 public:
  virtual ~Rule() = default;

  virtual std::string_view name() const = 0;
  int workers() const { return workers_; }
  // Gradients per update (the K of K-of-P).
  int k() const { return k_; }
  // AdaSync: change K; takes effect from the next update (a round already holding >= k
  // accepted gradients completes at the next arrival).
  virtual void set_k(int k) { k_ = k; }
  // True for the rules whose staleness is always 0 (sync, k-sync, k-batch-sync).
  virtual bool synchronous() const = 0;

  virtual Decision on_gradient(const Arrival& arrival) = 0;

  // Failed workers (docs/rules.md, "Failed workers"). True while the rule can make updates
  // with `live` workers left: the rules that take K distinct workers (k-sync, k-async) need
  // K <= live; sync and the k-batch rules, whose K gradients may come from any workers, one.
  virtual bool runs_with(int live) const { return live >= 1; }
  // Worker `worker` failed for good and `live` workers remain (runs_with(live) holds). sync
  // lowers K to `live`; the answer has `apply` (with cancel_in_flight, as the rule's updates)
  // when the round it holds is complete with the lower K. The others change nothing.
  virtual Decision on_retire(int /*worker*/, int /*live*/) { return {}; }

  // Stale-synchronous gates (ssp; docs/rules.md, "SSP"): false while worker w may not start
  // another minibatch. The protocol holds such a worker idle and starts it after the first
  // arrival or retirement that makes this true again. The K-of-P rules never hold anyone.
  virtual bool may_start(int /*worker*/) const { return true; }

  // True when an update to `version` cuts a minibatch in flight computed on `computed_on`, on
  // top of Decision::cancel_in_flight (ringmaster --old-point interrupt: its delay reached R).
  virtual bool cuts_at(std::uint64_t /*computed_on*/, std::uint64_t /*version*/) const {
    return false;
  }
  // True when every update cuts the work in flight (the thread engine's server then owns the
  // workers' wake-ups, engine/wake_policy.hpp); rennala's discard and malenia let it run on.
  virtual bool cuts_in_flight() const { return synchronous(); }
  // Malenia (rules/malenia.cpp): the update is the mean over the workers of each worker's mean
  // of its gradients in the round, not the mean of them all.
  virtual bool averages_per_worker() const { return false; }

  // The attempts worker w's next minibatch may take and their time limit (MindFlayer); every
  // engine draws the minibatch's delay through it (straggler/time_limit.hpp).
  virtual AttemptBudget budget(int /*worker*/) const { return {}; }
  // What the round's sum of kept gradients is divided by to make the update: `kept`, their
  // count, by default (the mean). MindFlayer as published divides by their expected count.
  virtual double update_divisor(int kept) const { return kept; }
  // Called once by the server, before the first arrival, with the run's delays: a rule whose
  // update needs their distributions (MindFlayer as published) reads them here; its
  // registration's check_delays has refused delays it cannot use.
  virtual void use_delays(const StragglerProfile& /*delays*/) {}

  // Accepted gradients in the current (unfinished) round.
  int pending() const { return pending_; }

  // The rule's own state beyond K and the round's count (rule_state.hpp): what a resumed run
  // needs to go on exactly as an uninterrupted one would. The default has none.
  virtual void save_state(RuleState& /*out*/) const {}
  // Restores it from what save_state wrote (in.version() says which version of the rule's state
  // wrote it); a field missing or out of range marks `in` bad, and the resume is refused.
  virtual void load_state(RuleState& /*in*/) {}

  // A checkpoint's copy of the rule's state: K, the round's count and save_state's fields,
  // under the rule's name and state version; load() marks a reader bad whose K, round, rule or
  // fields do not fit this rule. Not overridden: a rule's own part is save_state's.
  void save(StateWriter& out) const;
  void load(StateReader& in);
  // Forgets the round so far (a real-clock run resumed from a checkpoint starts a new round).
  virtual void clear_round() { pending_ = 0; }

 protected:
  Rule(int workers, int k) : workers_(workers), k_(k) {}
  // The most accepted gradients a round can hold: a checkpoint's larger count is corrupt.
  virtual std::int64_t most_pending() const { return std::max(workers_, k_); }
  int workers_;
  int k_;
  int pending_ = 0;
};

// --rule and --k as the user gave them, and the rule's own options (rule_option.hpp); k = 0
// means "the rule's default" (P for sync, 1 for async).
struct RuleSpec {
  std::string name = "sync";
  int k = 0;
  RuleParams params{};
};

// A validated rule: its registered name (rule_registry.hpp), P, the effective K (sync: P,
// async and ssp: 1) and its own options as given.
struct RuleConfig {
  std::string rule = "sync";
  int workers = 1;
  int k = 1;
  RuleParams params{};
  // True for the rules whose staleness is always 0 (sync, k-sync, k-batch-sync).
  bool synchronous() const;
  // The registered name, as --rule gives it.
  std::string_view name() const { return rule; }
};

// The registered rules' names (rule_registry.hpp), the built-in ones first.
std::vector<std::string> rule_names();

// Validates name, P and K as the rule's registration says (1 <= K <= P; sync implies K = P,
// async and ssp K = 1), and the rule's own options: each one given must be the rule's, of its
// type and range, and the rule's resolve hook checks what they mean (ssp's s >= 0, backup's
// 0 <= b < P). Errors are one line naming the problem and the fix; an unknown name lists the
// rules.
Result<RuleConfig> resolve_rule(const RuleSpec& spec, int workers);

// A fresh state machine for a validated rule (one per run: it holds the round's state).
std::unique_ptr<Rule> make_rule(const RuleConfig& config);

}  // namespace stalesgd
