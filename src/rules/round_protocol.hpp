// RoundProtocol: carries out a rule's decisions for every engine (threads, virtual clock, Monte
// Carlo, MPI). It keeps each worker's minibatch state (computing on a version, waiting for the
// next update, or between minibatches), asks the Rule about each arriving gradient, and answers
// with who is cut and who starts a new minibatch, in one deterministic order. Engines only carry
// the answer out (wake a thread, schedule an event, send a message): no engine interprets a
// Decision on its own (docs/architecture.md, "The path of one gradient").
//
// Thread safety: not thread-safe; only the server role calls it (under the server lock, on the
// server thread, or in the single-threaded simulator).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "stalesgd/rules/rule.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {

class RoundProtocol {
 public:
  // One worker to (re)start: `cut` when its minibatch in flight was cancelled by this update.
  struct Start {
    int worker = 0;
    bool cut = false;
  };
  // What one arrival leads to. The caller applies the update first when decision.apply (the
  // server's version becomes current + 1); every worker in `start` then begins a minibatch on
  // the server's version, in this order (cut ones first reported as cut). Valid until the next
  // call.
  struct Step {
    Decision decision;
    std::span<const Start> start;
  };

  RoundProtocol(Rule& rule, int workers);

  // The run begins: every worker starts on version 0, in worker order.
  std::span<const Start> begin();
  // Worker w's gradient, computed on `computed_on`, reached the server at version `current`;
  // it stands for `attempts` attempts under a time limit, all `abandoned` when it carries no
  // gradient (Arrival). A rejected gradient is counted as cancelled and its worker restarts,
  // except an abandoned push the rule tells to wait; a rejection may complete the round.
  Step on_arrival(int w, std::uint64_t computed_on, std::uint64_t current, int attempts = 1,
                  bool abandoned = false);

  Rule& rule() { return rule_; }
  const Rule& rule() const { return rule_; }

  // What an engine needs of the rule beyond its decisions, asked here and never of the rule
  // itself, so that no engine, simulator or Monte Carlo knows a rule family's hooks
  // (docs/architecture.md, "The path of one gradient").
  // The attempts worker w's next minibatch may take and their time limit (MindFlayer's).
  AttemptBudget budget(int w) const { return rule_.budget(w); }
  // True when some worker's minibatches run under a time limit: their attempts are drawn
  // through budget() and checkpointed.
  bool time_limited() const;
  // True when every update cuts the minibatches in flight, so that only the ones that can make
  // the round's cut need releasing (the thread engine's server-owned wake-ups).
  bool cuts_every_update() const { return rule_.cuts_in_flight(); }
  // Accepted gradients the current round still needs before its update (at least 1).
  int still_needed() const;
  int workers() const { return static_cast<int>(state_.size()); }
  // True while the rule's gate holds worker w idle (ssp: too far ahead of the slowest).
  bool held(int w) const { return state_[ix(w)].phase == Phase::kHeld; }
  // True while worker w's minibatch is assigned and has not reached the server.
  bool computing(int w) const { return state_[ix(w)].phase == Phase::kComputing; }
  // The version worker w's current (or last) minibatch was started on.
  std::uint64_t version_of(int w) const { return state_[ix(w)].version; }

  // Failed workers (docs/rules.md, "Failed workers"; round_protocol_retire.cpp). What a
  // retirement leads to: `runs_on` false when the rule cannot make another update with the
  // workers left (the caller ends the run); otherwise a step as on_arrival's, which may apply
  // the update the departure completed (sync's round needs only the live workers).
  struct Retirement {
    bool runs_on = true;
    Step step;
  };
  // Worker w failed for good at server version `current`: it is never started again, its
  // minibatch in flight (if any) is dropped and counted as cancelled, and the rule learns how
  // many workers are left. Retiring a worker twice changes nothing.
  Retirement retire(int w, std::uint64_t current);
  bool retired(int w) const { return state_[ix(w)].phase == Phase::kRetired; }
  // Workers not retired.
  int live() const;

  // Per-worker counts: minibatches started, gradients that reached the server, minibatches cut
  // or discarded as stale.
  std::uint64_t started(int w) const { return state_[ix(w)].started; }
  std::uint64_t pushed(int w) const { return state_[ix(w)].pushed; }
  std::uint64_t cancelled(int w) const { return state_[ix(w)].cancelled; }

  // Checkpoints: every worker's state and counts (not the rule's; the rule saves itself).
  void save(StateWriter& out) const;
  void load(StateReader& in);
  // A real-clock resume: nobody is computing or waiting; begin() then starts every worker on
  // `version`, and `dropped` (gradients of the unfinished round, by worker) count as cancelled.
  void restart(std::uint64_t version, std::span<const int> dropped);

 private:
  // kHeld last: checkpoints written before it keep their numbers.
  enum class Phase { kIdle, kComputing, kWaiting, kRetired, kHeld };
  struct WorkerState {
    Phase phase = Phase::kIdle;
    std::uint64_t version = 0;
    std::uint64_t started = 0;
    std::uint64_t pushed = 0;
    std::uint64_t cancelled = 0;
  };
  static std::size_t ix(int w) { return static_cast<std::size_t>(w); }
  void start(int w, std::uint64_t version, bool cut);
  // Starts w unless the rule's gate holds it (Rule::may_start).
  void start_or_hold(int w, std::uint64_t version);
  // Starts, in worker order, every held worker the rule lets go now.
  void release_held(std::uint64_t version);

  Rule& rule_;
  std::vector<WorkerState> state_;
  std::vector<Start> starts_;        // the answer of the latest call
  std::uint64_t begin_version_ = 0;  // the version begin() starts everyone on
  int held_ = 0;                     // workers in kHeld: release_held has nothing to do at 0
};

}  // namespace stalesgd
