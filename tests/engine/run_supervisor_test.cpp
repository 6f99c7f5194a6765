// RunSupervisor: stop conditions, the snapshot schedule, finish() (final snapshot, time to
// target) and the real-clock supervise() loop against a fake engine.
#include "engine/run_supervisor.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include "engine/engine_test_util.hpp"
#include "stalesgd/util/seed.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

namespace {

constexpr std::size_t kEvalSamples = 500;
const double kInf = std::numeric_limits<double>::infinity();

TrainerOptions options() {
  TrainerOptions o;
  o.model.name = "softmax";
  o.rule = {"async", 0};
  o.workers = 2;
  o.eval_test_samples = kEvalSamples;
  o.eval_train_samples = 200;
  o.progress = false;
  return o;
}

// A RunContext on MNIST as train() builds it; `interrupt` is the test's flag.
struct Context {
  explicit Context(const TrainerOptions& o)
      : run(resolve_ok(o)), ctx{run, run.options(), mnist(), softmax_for(mnist()), {}, &interrupt} {
    ctx.initial.resize(ctx.model->num_params());
    ctx.model->init_params(ctx.initial, derive_seed(1, SeedStream::kModelInit));
  }
  std::atomic<bool> interrupt{false};
  ResolvedRun run;
  RunContext ctx;
};

// w_0 after a few hundred samples of plain SGD: far better than w_0 itself.
std::vector<float> trained(const Model& model, const std::vector<float>& w0) {
  std::vector<float> w = w0, grad(w0.size());
  auto ws = model.make_workspace(100);
  const auto& train = mnist().train;
  for (std::size_t step = 0; step < 40; ++step) {
    const Batch batch{train.sample(step * 100), train.labels.data() + step * 100, 100};
    REQUIRE(model.loss_and_gradient(w, batch, grad, *ws).has_value());
    for (std::size_t i = 0; i < w.size(); ++i) w[i] -= 0.5f * grad[i];
  }
  return w;
}

double test_error(const Model& model, const std::vector<float>& w) {
  auto ws = model.make_workspace(500);
  return model.evaluate(w, mnist().test, *ws, kEvalSamples).error;
}

// An engine whose version advances by 10 per wait and which ends the run itself at its
// `own_stop_at`-th wait, if given.
class FakeEngine final : public SupervisedEngine {
 public:
  FakeEngine(std::vector<float> params, int own_stop_at, StopReason own)
      : params_(std::move(params)), own_stop_at_(own_stop_at), own_(own) {}

  StopReason wait_until(Clock::time_point deadline) override {
    std::this_thread::sleep_until(deadline);
    ++waits;
    version += 10;
    return waits == own_stop_at_ ? own_ : StopReason::kNone;
  }
  void inspect(const Look& look) override { look(version, params_, nullptr); }
  StopReason stop(StopReason reason) override {
    stops.push_back(reason);
    return stop_answer == StopReason::kNone ? reason : stop_answer;
  }
  double mean_staleness() override { return 0.0; }

  std::uint64_t version = 0;
  int waits = 0;
  std::vector<StopReason> stops;
  StopReason stop_answer = StopReason::kNone;  // set: the engine had ended the run first

 private:
  std::vector<float> params_;
  int own_stop_at_;
  StopReason own_;
};

}  // namespace

TEST_CASE("stop_due: iterations, time, interrupt, otherwise none", "[engine][supervisor]") {
  auto o = options();
  o.iterations = 100;
  o.time_s = 2.0;
  Context c(o);
  RunSupervisor sup(c.ctx, RunSupervisor::Evaluation::kInline);
  CHECK(sup.stop_due(0.5, 99) == StopReason::kNone);
  CHECK(sup.stop_due(1.999, 0) == StopReason::kNone);
  CHECK(sup.stop_due(0.5, 100) == StopReason::kIterations);
  CHECK(sup.stop_due(2.0, 5) == StopReason::kTime);
  CHECK(sup.stop_due(3.0, 200) == StopReason::kIterations);  // the iteration budget first
  c.interrupt.store(true);
  CHECK(sup.stop_due(0.5, 5) == StopReason::kInterrupted);

  SECTION("no time budget: time never stops the run") {
    auto o2 = options();
    o2.iterations = 10;
    Context c2(o2);
    RunSupervisor sup2(c2.ctx, RunSupervisor::Evaluation::kInline);
    CHECK(sup2.stop_due(1e9, 9) == StopReason::kNone);
    CHECK(sup2.stop_due(1e9, 10) == StopReason::kIterations);
  }
}

TEST_CASE("next_snapshot_s: 0, every, 2 every, ..., then +infinity at the time budget",
          "[engine][supervisor]") {
  auto o = options();
  o.time_s = 1.0;
  o.eval_every_s = 0.25;
  Context c(o);
  RunSupervisor sup(c.ctx, RunSupervisor::Evaluation::kInline);
  for (int n = 0; n < 4; ++n) {
    CHECK(sup.next_snapshot_s() == Approx(0.25 * n).margin(1e-12));
    sup.snapshot(0.25 * n, static_cast<std::uint64_t>(n), c.ctx.initial);
  }
  // The one due at 1.0 is left to the final snapshot.
  CHECK(sup.next_snapshot_s() == kInf);

  SECTION("without a time budget the schedule goes on") {
    auto o2 = options();
    o2.iterations = 10;
    o2.eval_every_s = 0.5;
    Context c2(o2);
    RunSupervisor sup2(c2.ctx, RunSupervisor::Evaluation::kInline);
    for (int n = 0; n < 5; ++n) sup2.snapshot(0.5 * n, 0, c2.ctx.initial);
    CHECK(sup2.next_snapshot_s() == Approx(2.5));
  }
}

TEST_CASE(
    "finish: stop reason, final snapshot at end_s, time to target from the first "
    "evaluation at or under it",
    "[engine][supervisor]") {
  auto model = softmax_for(mnist());
  std::vector<float> w0(model->num_params());
  model->init_params(w0, derive_seed(1, SeedStream::kModelInit));
  const auto good = trained(*model, w0);
  const double bad_error = test_error(*model, w0), good_error = test_error(*model, good);
  INFO("w_0 error " << bad_error << ", trained error " << good_error);
  REQUIRE(good_error + 0.2 < bad_error);

  auto o = options();
  o.time_s = 1.0;
  o.eval_every_s = 0.25;
  o.target_error = (good_error + bad_error) / 2;
  Context c(o);
  RunSupervisor sup(c.ctx, RunSupervisor::Evaluation::kInline);
  sup.snapshot(0.0, 0, w0);
  CHECK(sup.stop_due(0.1, 1) == StopReason::kNone);
  sup.snapshot(0.25, 7, good);
  // Inline evaluation: the target is known at once.
  CHECK(sup.stop_due(0.3, 8) == StopReason::kTargetError);
  sup.snapshot(0.5, 12, good);
  const auto run = sup.finish(RunRecord{}, StopReason::kTargetError, 0.6, 15, good);
  CHECK(run.stop_reason == StopReason::kTargetError);
  CHECK(run.wall_s == 0.6);
  REQUIRE(run.evals.size() == 4);
  CHECK(run.evals[0].iteration == 0);
  CHECK(run.evals[0].test_error == Approx(bad_error));
  CHECK(run.evals[1].wall_s == 0.25);
  CHECK(run.evals[1].test_error == Approx(good_error));
  CHECK(run.evals[3].wall_s == 0.6);  // the final snapshot
  CHECK(run.evals[3].iteration == 15);
  REQUIRE(run.time_to_target_s.has_value());
  CHECK(*run.time_to_target_s == 0.25);
  CHECK(run.final_params == good);

  SECTION("a target never reached leaves time_to_target_s empty") {
    auto o2 = options();
    o2.iterations = 10;
    o2.target_error = good_error / 2;
    Context c2(o2);
    RunSupervisor sup2(c2.ctx, RunSupervisor::Evaluation::kInline);
    sup2.snapshot(0.0, 0, good);
    const auto r2 = sup2.finish(RunRecord{}, StopReason::kIterations, 0.1, 10, good);
    CHECK(r2.stop_reason == StopReason::kIterations);
    CHECK(r2.evals.size() == 2);
    CHECK_FALSE(r2.time_to_target_s.has_value());
  }
}

TEST_CASE("supervise returns the engine's own stop reason and snapshots on time",
          "[engine][supervisor]") {
  auto o = options();
  o.time_s = 60.0;  // not reached: the engine ends the run
  // Longer than an inline evaluation takes even under sanitizers, so that the loop waits (the
  // fake engine advances only while waited on).
  o.eval_every_s = 0.25;
  Context c(o);
  RunSupervisor sup(c.ctx, RunSupervisor::Evaluation::kInline);
  FakeEngine engine(c.ctx.initial, 6, StopReason::kDiverged);
  const auto [reason, seconds] = sup.supervise(engine, RunSupervisor::Clock::now());
  CHECK(reason == StopReason::kDiverged);
  CHECK(engine.waits == 6);
  CHECK(engine.stops == std::vector<StopReason>{StopReason::kDiverged});
  CHECK(seconds > 0.0);

  const auto run = sup.finish(RunRecord{}, reason, seconds, engine.version, c.ctx.initial);
  REQUIRE(run.evals.size() >= 2);
  // Every snapshot but the final one at or after its due time n * eval_every, in order.
  for (std::size_t n = 0; n + 1 < run.evals.size(); ++n) {
    INFO("snapshot " << n);
    CHECK(run.evals[n].wall_s >= 0.25 * static_cast<double>(n));
    CHECK(run.evals[n].iteration % 10 == 0);
    if (n > 0) {
      CHECK(run.evals[n].wall_s > run.evals[n - 1].wall_s);
      CHECK(run.evals[n].iteration >= run.evals[n - 1].iteration);
    }
  }
  CHECK(run.evals.back().wall_s == seconds);
  CHECK(run.evals.back().iteration == 60);
}

TEST_CASE("supervise stops the engine at the iteration budget and at an interrupt",
          "[engine][supervisor]") {
  SECTION("iterations") {
    auto o = options();
    o.iterations = 30;
    // Snapshots far apart: the fake engine advances only while waited on, and an inline
    // evaluation slower than eval_every (as under sanitizers) would keep every snapshot due.
    o.eval_every_s = 1.0;
    Context c(o);
    RunSupervisor sup(c.ctx, RunSupervisor::Evaluation::kInline);
    FakeEngine engine(c.ctx.initial, 1000, StopReason::kNone);
    const auto [reason, seconds] = sup.supervise(engine, RunSupervisor::Clock::now());
    CHECK(reason == StopReason::kIterations);
    CHECK(engine.version == 30);
    CHECK(engine.stops == std::vector<StopReason>{StopReason::kIterations});
    (void)seconds;
  }
  SECTION("the reason that holds is the engine's when it ended the run first") {
    auto o = options();
    o.iterations = 30;
    // Snapshots far apart: the fake engine advances only while waited on, and an inline
    // evaluation slower than eval_every (as under sanitizers) would keep every snapshot due.
    o.eval_every_s = 1.0;
    Context c(o);
    RunSupervisor sup(c.ctx, RunSupervisor::Evaluation::kInline);
    FakeEngine engine(c.ctx.initial, 1000, StopReason::kNone);
    engine.stop_answer = StopReason::kFailed;
    CHECK(sup.supervise(engine, RunSupervisor::Clock::now()).first == StopReason::kFailed);
    CHECK(engine.stops == std::vector<StopReason>{StopReason::kIterations});
  }
  SECTION("interrupt") {
    auto o = options();
    o.time_s = 60.0;
    Context c(o);
    c.interrupt.store(true);
    RunSupervisor sup(c.ctx, RunSupervisor::Evaluation::kInline);
    FakeEngine engine(c.ctx.initial, 1000, StopReason::kNone);
    CHECK(sup.supervise(engine, RunSupervisor::Clock::now()).first == StopReason::kInterrupted);
    CHECK(engine.waits == 0);
    CHECK(engine.stops == std::vector<StopReason>{StopReason::kInterrupted});
  }
}
