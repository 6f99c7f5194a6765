// ServerCore: the server's step for one arriving gradient, shared by every engine that has a
// server. It asks the RoundProtocol (and through it the rule), weights the gradient by the
// learning rate, adds it to the round's sum, applies w_{j+1} = w_j - (1/K) sum lr_i g_i when the
// rule says so, records the update and each gradient's staleness, and runs AdaSync. Engines own
// the threads or the event clock and carry out the protocol's answer; this owns the arithmetic.
//
// Thread safety: not thread-safe; called only by the server (one thread).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "engine/failure_ledger.hpp"
#include "engine/parameter_store.hpp"
#include "engine/run_context.hpp"
#include "engine/update_accumulator.hpp"
#include "engine/worker_means.hpp"
#include "rules/round_protocol.hpp"
#include "stalesgd/rules/rule.hpp"
#include "util/state_stream.hpp"

namespace stalesgd {

class ServerCore {
 public:
  // Owns a fresh rule of `ctx.run` and the protocol around it.
  ServerCore(RunContext& ctx, ParameterStore& store, RunRecord& run);

  struct Outcome {
    RoundProtocol::Step step;   // who is cut and who starts next (valid until the next call)
    std::uint64_t version = 0;  // server version after this arrival
  };

  // Every worker's first minibatch, on version 0.
  std::span<const RoundProtocol::Start> begin() { return protocol_.begin(); }
  // `grad` and `computed_params` (w_tau, the parameters the gradient was computed on) are read
  // during the call only; `duration_s` is the minibatch's measured time (GradientRecord). A
  // non-finite loss is a divergence Error.
  // `attempts` and `abandoned` as Arrival's (a time limit's): an abandoned push's gradient
  // is not read.
  Result<Outcome> on_gradient(double now_s, int worker, std::uint64_t computed_on, float loss,
                              double duration_s, std::span<const float> grad,
                              std::span<const float> computed_params, int attempts = 1,
                              bool abandoned = false);

  // Worker w failed (docs/rules.md, "Failed workers"), found at `now_s`: it leaves the
  // protocol (the engine drops its pushes from now on) and the ledger records it. The outcome
  // as on_gradient's: the update the departure completed, if any, and who starts. An Error
  // (one line naming the failed workers) when the rule cannot go on with the workers left.
  Result<Outcome> retire(double now_s, int worker, FailureKind kind);
  const FailureLedger& failures() const { return failures_; }

  const RoundProtocol& protocol() const { return protocol_; }
  const Rule& rule() const { return *rule_; }
  // The per-worker counts of the protocol and the server, into `rec` (started, pushed,
  // applied, cancelled, the failure); computed, busy and idle are the engine's.
  void count(int worker, WorkerRecord& rec) const;
  // Checkpoints: the rule, the protocol, the round's sum and gradients, the counts, AdaSync.
  // Parameters are the store's (saved by the engine).
  void save(StateWriter& out) const;
  void load(StateReader& in);
  // The same with the store's version and parameters first: all a real-clock server (threads,
  // MPI) keeps. load_server() restores the store too.
  void save_server(StateWriter& out) const;
  void load_server(StateReader& in);
  // A real-clock resume: the round in progress is dropped (its gradients count as cancelled)
  // and every worker starts afresh on the server's version at begin().
  void restart();
  double mean_staleness() const {
    return staleness_count_ ? staleness_sum_ / staleness_count_ : 0.0;
  }

 private:
  struct Accepted {
    int worker;
    std::uint64_t computed_on;
    double lr;
    float loss;
    double duration_s;
    double drift_sq;  // --record-drift: |w_j - w_tau|^2 (NaN when fresh or not recorded)
    double grad_sq;   // --record-drift: |g|^2 (NaN when not recorded)
  };

  // The records of the update that made `version` from `current`, over round_, which it
  // clears; then AdaSync.
  void record_update(double now_s, std::uint64_t current, std::uint64_t version);
  // The round's update without a further gradient (a departure or an abandoned push ended it).
  void apply_round(double now_s, std::uint64_t current, Outcome& out);

  RunContext& ctx_;
  const LearningRate& lr_;
  std::unique_ptr<Rule> rule_;
  RoundProtocol protocol_;
  ParameterStore& store_;
  RunRecord& run_;
  UpdateAccumulator acc_;
  std::optional<WorkerMeans> means_;  // a rule that averages per worker first (malenia)
  std::vector<Accepted> round_;
  std::vector<std::uint64_t> applied_;
  double staleness_sum_ = 0.0;
  double staleness_count_ = 0.0;
  FailureLedger failures_;

  // AdaSync (see adapt_k): the loss estimate F over the current window of t0 seconds.
  void adapt_k(double now_s);
  int k0_;
  double next_adapt_s_;
  double window_loss_sum_ = 0.0;
  double window_loss_count_ = 0.0;
  double initial_loss_ = 0.0;  // F(w_0): the first update's mean minibatch loss
};

}  // namespace stalesgd
