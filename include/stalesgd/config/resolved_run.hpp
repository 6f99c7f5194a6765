// ResolvedRun: one training run with everything parsed, validated and derived exactly once —
// the options as given, the rule with its effective K, the delay profile (trace files read),
// the learning-rate rule, the model spec with its defaults. Every engine, the runtime theory
// and the output writers read it; none of them parses a spec or validates a flag again.
//
// Thread safety: immutable once resolved; safe to share between threads. Copies share the
// parsed delay profile.
#pragma once

#include <memory>

#include "stalesgd/config/trainer_options.hpp"
#include "stalesgd/lr/learning_rate.hpp"
#include "stalesgd/machine/machine.hpp"
#include "stalesgd/rules/rule.hpp"
#include "stalesgd/straggler/failure_plan.hpp"
#include "stalesgd/straggler/profile.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

class ResolvedRun {
 public:
  // validate()s `options` and derives the rest. The error is one line naming the flag and the
  // fix, as validate()'s.
  static Result<ResolvedRun> resolve(TrainerOptions options);

  // The options with the derived values written back: rule.k is the effective K, model.hidden
  // the layers an mlp really has, worker_timeout_s and stall_timeout_s the timeouts in effect
  // (stall_timeout_s 0 on the virtual clock). What summary.json's "config" shows.
  const TrainerOptions& options() const { return options_; }
  const RuleConfig& rule() const { return rule_; }
  int workers() const { return options_.workers; }
  const StragglerProfile& delays() const { return delays_; }
  // A fresh state machine for this rule (each run needs its own: it holds the round).
  std::unique_ptr<Rule> make_rule() const { return stalesgd::make_rule(rule_); }
  // Immutable and shared: the server calls rate() under its lock, Hogwild workers concurrently.
  const LearningRate& learning_rate() const { return *lr_; }
  // The workers --fail makes fail (empty without --fail).
  const FailurePlan& failures() const { return failures_; }
  // The machine the virtual clock models (the free one unless a machine flag says otherwise);
  // its compute_s is the effective --compute-time. `parameters` is the engine's to fill in.
  const Machine& machine() const { return machine_; }

 private:
  ResolvedRun(TrainerOptions options, RuleConfig rule, StragglerProfile delays,
              std::shared_ptr<const LearningRate> lr, FailurePlan failures, Machine machine)
      : options_(std::move(options)),
        rule_(rule),
        delays_(std::move(delays)),
        lr_(std::move(lr)),
        failures_(std::move(failures)),
        machine_(std::move(machine)) {}

  TrainerOptions options_;
  RuleConfig rule_;
  StragglerProfile delays_;
  std::shared_ptr<const LearningRate> lr_;
  FailurePlan failures_;
  Machine machine_;
};

}  // namespace stalesgd
