// Failed workers and failed threads on the real clock (docs/rules.md, "Failed workers"), with
// the server inline and on its own thread, and on Hogwild!: a crashed worker contributes
// nothing after its crash, a hung one nothing after it hung and is found by the worker timeout,
// a rule left without enough workers stops with one line, the stall watchdog ends a run that
// cannot go on, and an exception in a worker or the evaluator ends the run with its message.
// Times are short delays and generous bounds: no assert depends on the machine's speed.
#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>

#include "engine/engine_test_util.hpp"
#include "engine/run_context.hpp"
#include "stalesgd/util/seed.hpp"
#include "support/forwarding_model.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

namespace {

// A softmax whose gradients (after `good_gradients` of them) or evaluations throw: a real
// Model, as a user's could be, through the engine's ordinary paths.
class ThrowingModel final : public ForwardingModel {
 public:
  // `threw_at`, when given, receives the steady clock's time of the first evaluation that threw.
  ThrowingModel(std::unique_ptr<Model> inner, int good_gradients, bool bad_evaluations,
                std::shared_ptr<std::atomic<std::int64_t>> threw_at = nullptr)
      : ForwardingModel(std::move(inner)),
        good_(good_gradients),
        bad_eval_(bad_evaluations),
        threw_at_(std::move(threw_at)) {}
  std::optional<float> loss_and_gradient(std::span<const float> w, const Batch& batch,
                                         std::span<float> grad, Workspace& ws,
                                         const std::atomic<bool>* cancel) const override {
    if (good_ >= 0 && calls_.fetch_add(1, std::memory_order_relaxed) >= good_) {
      throw std::runtime_error("gradient kernel failed");
    }
    return inner().loss_and_gradient(w, batch, grad, ws, cancel);
  }
  EvalSums evaluate_sums(std::span<const float> w, const Split& data, std::size_t first,
                         std::size_t count, Workspace& ws) const override {
    if (bad_eval_) {
      if (threw_at_ != nullptr) {
        std::int64_t none = 0;
        threw_at_->compare_exchange_strong(
            none, std::chrono::steady_clock::now().time_since_epoch().count());
      }
      throw std::runtime_error("evaluation ran out of memory");
    }
    return inner().evaluate_sums(w, data, first, count, ws);
  }

 private:
  int good_;  // < 0: never throws
  bool bad_eval_;
  std::shared_ptr<std::atomic<std::int64_t>> threw_at_;
  mutable std::atomic<int> calls_{0};  // relaxed: only counts
};

// train() with `model` in place of the one the options name.
RunRecord run_with_model(const TrainerOptions& o, std::unique_ptr<Model> model) {
  const ResolvedRun run = resolve_ok(o);
  RunContext ctx{run, run.options(), mnist(), std::move(model), {}, nullptr};
  ctx.initial.resize(ctx.model->num_params());
  ctx.model->init_params(ctx.initial, derive_seed(o.seed, SeedStream::kModelInit));
  auto r = o.server == ServerPlacement::kHogwild ? train_hogwild(ctx) : train_threads(ctx);
  if (!r) FAIL(r.error().message);
  return std::move(r).value();
}

}  // namespace

TEST_CASE("thread failures: async runs on without a crashed worker",
          "[engine][threads][failures]") {
  auto o = quick_options("async", 4, 0, "const:2ms");
  o.server = GENERATE(ServerPlacement::kInline, ServerPlacement::kThread);
  INFO("--server " << to_string(o.server));
  o.fail = "w1:crash@300ms";
  o.time_s = 1.0;
  const auto run = run_ok(o);
  CHECK(run.stop_reason == StopReason::kTime);
  const auto& w1 = run.workers[1];
  CHECK(w1.failed);
  CHECK(w1.failure == "crash");
  CHECK(w1.failed_at_s >= 0.3);
  CHECK(w1.failed_at_s < 0.9);
  CHECK(w1.applied > 0);
  // Each async update is one gradient, at its push: none of worker 1's after it crashed.
  CHECK(last_update_with(run, 1) <= w1.failed_at_s);
  CHECK(last_update_with(run, 0) > w1.failed_at_s);
  CHECK(run.updates.back().wall_s > 0.8);
}

TEST_CASE("thread failures: sync runs on after a hang is found by the worker timeout",
          "[engine][threads][failures]") {
  auto o = quick_options("sync", 3, 0, "const:2ms");
  o.server = GENERATE(ServerPlacement::kInline, ServerPlacement::kThread);
  INFO("--server " << to_string(o.server));
  o.fail = "w0:hang@200ms";
  o.worker_timeout_s = 0.3;
  o.time_s = 1.5;
  const auto run = run_ok(o);
  CHECK(run.stop_reason == StopReason::kTime);
  const auto& w0 = run.workers[0];
  CHECK(w0.failed);
  CHECK(w0.failure == "hang");
  CHECK(w0.failed_at_s >= 0.49);  // not before the timeout past its minibatch's end
  CHECK(w0.failed_at_s < 1.2);
  CHECK(last_update_with(run, 0) < 0.3);  // nothing after it hung (+ a round)
  // Sync waited for it, then ran on with the two others.
  std::size_t after = 0;
  for (const auto& u : run.updates) {
    if (u.wall_s <= w0.failed_at_s) continue;
    ++after;
    CHECK(u.n_grads == 2);
  }
  CHECK(after > 10);
}

TEST_CASE("thread failures: a minibatch the server holds back is never taken for a hang",
          "[engine][threads][failures]") {
  // k-sync K = 2 of 3: worker 0 (4 ms) never makes the cut of w1 and w2 (2 ms), so the server
  // never releases its minibatches. When w2 hangs, the round waits until w2 is found; w0's
  // minibatch is by then as far past its end, but it was held back, not late: it is released
  // and completes the rounds from then on.
  auto o = quick_options("k-sync", 3, 2, "const:2ms;w0=const:4ms");
  o.server = GENERATE(ServerPlacement::kInline, ServerPlacement::kThread);
  INFO("--server " << to_string(o.server));
  o.fail = "w2:hang@100ms";
  o.worker_timeout_s = 0.3;
  o.time_s = 1.5;
  const auto run = run_ok(o);
  CHECK(run.stop_reason == StopReason::kTime);
  CHECK(run.workers[2].failed);
  CHECK_FALSE(run.workers[0].failed);
  CHECK_FALSE(run.workers[1].failed);
  CHECK(last_update_with(run, 0) > 1.0);
  CHECK(last_update_with(run, 1) > 1.0);
}

TEST_CASE("thread failures: k-sync with K = P stops with one line when a worker crashes",
          "[engine][threads][failures]") {
  auto o = quick_options("k-sync", 3, 3, "const:2ms");
  o.server = GENERATE(ServerPlacement::kInline, ServerPlacement::kThread);
  INFO("--server " << to_string(o.server));
  o.fail = "w2:crash@200ms";
  o.time_s = 30.0;
  const auto run = run_ok(o);
  CHECK(run.stop_reason == StopReason::kWorkersFailed);
  CHECK(run.wall_s < 20.0);  // it ended at the crash, not at the budget
  CHECK_THAT(run.stop_message,
             Contains("worker 2 failed (w2 crashed at 0.") &&
                 Contains("k-sync needs K = 3 live workers and 2 of 3 are left: lower --k to 2"));
  CHECK(run.workers[2].failed);
}

TEST_CASE("thread failures: the stall watchdog ends a run that waits for a hung worker",
          "[engine][threads][failures]") {
  auto o = quick_options("sync", 2, 0, "const:2ms");
  o.server = GENERATE(ServerPlacement::kInline, ServerPlacement::kThread);
  INFO("--server " << to_string(o.server));
  o.fail = "w1:hang@100ms";
  o.worker_timeout_s = 1000.0;  // never found in time: only the watchdog ends it
  o.stall_timeout_s = 0.4;
  o.time_s = 60.0;
  const auto run = run_ok(o);
  CHECK(run.stop_reason == StopReason::kStalled);
  CHECK(run.wall_s < 30.0);
  CHECK_THAT(run.stop_message, Contains("the run stalled: no update for ") &&
                                   Contains("(--stall-timeout 400ms)") &&
                                   Contains("the server waits for w1 (minibatch assigned ") &&
                                   Contains("1 of 2 workers wait for the update"));
  CHECK_FALSE(run.workers[1].failed);  // never found: the run did not outlast the timeout
}

TEST_CASE("thread failures: Hogwild records a crash and finds a hang",
          "[engine][hogwild][failures]") {
  auto o = quick_options("async", 3, 0, "const:2ms");
  o.server = ServerPlacement::kHogwild;
  o.fail = "w2:crash@200ms;w0:hang@100ms";
  o.worker_timeout_s = 0.3;
  o.time_s = 1.2;
  const auto run = run_ok(o);
  CHECK(run.stop_reason == StopReason::kTime);
  CHECK(run.workers[2].failed);
  CHECK(run.workers[2].failure == "crash");
  CHECK(run.workers[2].failed_at_s >= 0.2);
  CHECK(last_update_with(run, 2) <= run.workers[2].failed_at_s);
  CHECK(run.workers[0].failed);
  CHECK(run.workers[0].failure == "hang");
  CHECK(run.workers[0].failed_at_s >= 0.39);
  CHECK(last_update_with(run, 0) < 0.2);
  CHECK(last_update_with(run, 1) > 1.0);  // the last worker went on

  o.fail = "w0:crash@100ms;w1:crash@100ms;w2:crash@150ms";
  o.time_s = 30.0;
  const auto all = run_ok(o);
  CHECK(all.stop_reason == StopReason::kWorkersFailed);
  CHECK(all.wall_s < 20.0);
  CHECK_THAT(all.stop_message, Contains("all 3 workers failed (w") &&
                                   Contains("async needs at least one live worker"));
}

TEST_CASE("thread failures: an exception in a worker ends the run with its message",
          "[engine][threads][failures]") {
  auto o = quick_options("k-async", 3, 2, "const:1ms");
  o.server =
      GENERATE(ServerPlacement::kInline, ServerPlacement::kThread, ServerPlacement::kHogwild);
  if (o.server == ServerPlacement::kHogwild) o.rule = {"async", 0};
  INFO("--server " << to_string(o.server));
  o.time_s = 30.0;
  const auto run =
      run_with_model(o, std::make_unique<ThrowingModel>(softmax_for(mnist()), 20, false));
  CHECK(run.stop_reason == StopReason::kFailed);
  CHECK(run.wall_s < 20.0);
  CHECK_THAT(run.stop_message,
             Contains("internal error in worker ") && Contains(": gradient kernel failed"));
  CHECK_FALSE(run.updates.empty());  // what was recorded is kept
}

TEST_CASE("thread failures: an exception in the evaluator ends the run with its message",
          "[engine][threads][failures]") {
  auto o = quick_options("sync", 2, 0, "const:1ms");
  o.server = GENERATE(ServerPlacement::kInline, ServerPlacement::kThread);
  INFO("--server " << to_string(o.server));
  o.time_s = 30.0;
  const auto threw_at = std::make_shared<std::atomic<std::int64_t>>(0);
  const auto run =
      run_with_model(o, std::make_unique<ThrowingModel>(softmax_for(mnist()), -1, true, threw_at));
  const auto ended = std::chrono::steady_clock::now().time_since_epoch().count();
  CHECK(run.stop_reason == StopReason::kFailed);
  // The run ends at the evaluator's failure, not at its budget. The background evaluator runs
  // at SCHED_IDLE, so on a loaded machine (the suite beside other tests) its first snapshot may
  // wait out the budget; whenever it threw, the run is over within the supervisor's next polls
  // (10 s of slack for that loaded machine).
  REQUIRE(threw_at->load() != 0);
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::duration(ended - threw_at->load()))
            .count() < 10.0);
  CHECK(run.stop_message == "internal error in the evaluator: evaluation ran out of memory");
  CHECK(run.evals.empty());  // no row for an evaluation that failed
}
