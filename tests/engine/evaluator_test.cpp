// Evaluator: parallel evaluation (oneTBB blocks) gives the serial rows bit for bit at any thread
// count, inline and for the backlog at the end; train_objective adds the L2 term of the weights
// only; a signal leaves only the final snapshot; an exception becomes failed() and leaves no row.
#include "engine/evaluator.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <stdexcept>
#include <thread>
#include <utility>

#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <catch2/catch.hpp>

#include "support/forwarding_model.hpp"

using namespace stalesgd;

namespace {

// Random 28x28 samples: test, train and held-out counts that are not multiples of the
// evaluation batch, so the last block of each is short.
Dataset random_data() {
  Dataset d;
  d.name = "random";
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
  for (auto [split, count] :
       {std::pair{&d.test, 1234}, std::pair{&d.train, 1900}, std::pair{&d.val, 700}}) {
    split->shape = {1, 28, 28};
    split->count = static_cast<std::size_t>(count);
    split->features.resize(split->count * split->dim());
    for (float& x : split->features) x = pixel(rng);
    for (int i = 0; i < count; ++i) split->labels.push_back(static_cast<std::uint8_t>(rng() % 10));
  }
  return d;
}

const Dataset& data() {
  static const Dataset d = random_data();
  return d;
}

std::unique_ptr<Model> mlp() {
  ModelSpec spec;
  spec.name = "mlp";
  return std::move(make_model(spec, {1, 28, 28}, 10)).value();
}

// Parameters of snapshot i: the initialisation of seed i.
std::vector<float> params(const Model& m, std::uint64_t i) {
  std::vector<float> w(m.num_params());
  m.init_params(w, i);
  return w;
}

EvaluatorOptions options(bool background, bool parallel) {
  EvaluatorOptions o;
  o.background = background;
  o.parallel = parallel;
  o.test_samples = 0;      // all 1234
  o.train_samples = 1100;  // a prefix of the train split
  o.eval_batch = 200;
  return o;
}

// The one row of a run whose only snapshot is `w`, its final one.
EvalRecord final_row(const Model& m, const Dataset& d, bool background, bool parallel,
                     const std::vector<float>& w) {
  Evaluator e(m, d, options(background, parallel));
  e.submit(0.0, 0, w, true);
  const auto rows = e.finish();
  REQUIRE(rows.size() == 1);
  return rows[0];
}

// Rows of `n` snapshots evaluated inline.
std::vector<EvalRecord> inline_rows(const Model& m, bool parallel, int n) {
  Evaluator e(m, data(), options(false, parallel));
  for (int i = 0; i < n; ++i) e.submit(0.5 * i, 10u * i, params(m, i), i + 1 == n);
  return e.finish();
}

void check_identical(const std::vector<EvalRecord>& a, const std::vector<EvalRecord>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("row " << i);
    CHECK(a[i].wall_s == b[i].wall_s);
    CHECK(a[i].iteration == b[i].iteration);
    // Exact: the same additions in the same order, not merely close.
    CHECK(a[i].test_loss == b[i].test_loss);
    CHECK(a[i].test_error == b[i].test_error);
    CHECK(a[i].train_loss == b[i].train_loss);
    CHECK(a[i].train_objective == b[i].train_objective);
    CHECK(a[i].val_loss == b[i].val_loss);
    CHECK(a[i].val_error == b[i].val_error);
  }
}

// The mlp, with an evaluation that holds the background thread (the one at SCHED_IDLE) in its
// first evaluation until finish() lifts its priority, so that the snapshots after the first
// are all left for finish() whatever the scheduler does; kThrow also throws on every other
// thread.
class Wrapped final : public test::ForwardingModel {
 public:
  enum class Eval { kThrow, kHoldIdle };
  Wrapped(std::unique_ptr<Model> inner, Eval eval)
      : ForwardingModel(std::move(inner)), eval_(eval) {}
  EvalSums evaluate_sums(std::span<const float> w, const Split& data, std::size_t first,
                         std::size_t count, Workspace& ws) const override {
    static thread_local bool background = false;
    const auto idle = [] { return (sched_getscheduler(0) & ~SCHED_RESET_ON_FORK) == SCHED_IDLE; };
    if (idle()) {
      background = true;
      holding_.store(true, std::memory_order_release);
      while (idle()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (eval_ == Eval::kThrow && !background) {
      throw std::runtime_error("no memory for the evaluation");
    }
    return inner().evaluate_sums(w, data, first, count, ws);
  }
  // Until the background thread holds its snapshot: then finish() finds the rest queued.
  void wait_until_held() const {
    while (!holding_.load(std::memory_order_acquire)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    holding_.store(false, std::memory_order_relaxed);  // for the next Evaluator
  }

 private:
  Eval eval_;
  // Release/acquire: the test thread waits on it; it carries no data.
  mutable std::atomic<bool> holding_{false};
};

}  // namespace

TEST_CASE("evaluator: parallel blocks give the serial rows bit for bit at 1, 2 and 8 threads",
          "[engine][evaluator]") {
  const auto m = mlp();
  const auto serial = inline_rows(*m, false, 3);
  REQUIRE(serial.size() == 3);
  // The serial rows are Model::evaluate's numbers.
  auto ws = m->make_workspace(200);
  const auto w1 = params(*m, 1);
  const EvalResult test = m->evaluate(w1, data().test, *ws);
  CHECK(serial[1].test_loss == test.loss);
  CHECK(serial[1].test_error == test.error);
  CHECK(serial[1].train_loss == m->evaluate(w1, data().train, *ws, 1100).loss);
  CHECK(serial[1].train_objective == serial[1].train_loss);  // no --l2: the same number
  for (int threads : {1, 2, 8}) {
    INFO(threads << " threads");
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    // An arena of `threads` slots, so that 8 threads really run on a 2-core machine.
    tbb::task_arena arena(threads);
    std::vector<EvalRecord> rows;
    arena.execute([&] { rows = inline_rows(*m, true, 3); });
    check_identical(rows, serial);
  }
}

TEST_CASE("evaluator: the backlog at the end, in parallel, gives the serial rows in order",
          "[engine][evaluator]") {
  const Wrapped m(mlp(), Wrapped::Eval::kHoldIdle);
  // 3 left for finish() at 8 threads: in blocks; 11: a snapshot per task.
  for (int snapshots : {4, 12}) {
    const auto serial = inline_rows(m, false, snapshots);
    for (int threads : {1, 2, 8}) {
      INFO(snapshots << " snapshots, " << threads << " threads");
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      tbb::task_arena arena(threads);
      std::vector<EvalRecord> rows;
      arena.execute([&] {
        // The background thread holds snapshot 0; finish() evaluates the others as TBB tasks.
        Evaluator e(m, data(), options(true, true));
        for (int i = 0; i < snapshots; ++i) {
          e.submit(0.5 * i, 10u * i, params(m, i), i + 1 == snapshots);
        }
        m.wait_until_held();
        rows = e.finish();
        CHECK(e.skipped() == 0);
        CHECK_FALSE(e.failed());
      });
      check_identical(rows, serial);
    }
  }
}

TEST_CASE("evaluator: val_loss and val_error are the model's on the held-out split, NaN without",
          "[engine][evaluator][holdout]") {
  const auto m = mlp();
  const auto w = params(*m, 4);
  auto ws = m->make_workspace(200);
  const auto want = m->evaluate(w, data().val, *ws, 0);
  Dataset no_val = data();
  no_val.val = {};
  for (auto [background, parallel] : {std::pair{false, false}, {false, true}, {true, true}}) {
    INFO("background " << background << ", parallel " << parallel);
    const auto row = final_row(*m, data(), background, parallel, w);
    CHECK(row.val_loss == Approx(want.loss).epsilon(1e-12));
    CHECK(row.val_error == want.error);
    CHECK(row.val_error != row.test_error);  // not the test split under another name

    const auto plain = final_row(*m, no_val, background, parallel, w);
    CHECK(std::isnan(plain.val_loss));
    CHECK(std::isnan(plain.val_error));
    CHECK(plain.test_error == row.test_error);
  }
}

TEST_CASE("evaluator: train_objective is train_loss plus l2/2 |W|^2 of the weights, not the biases",
          "[engine][evaluator]") {
  constexpr float kL2 = 0.25f;
  ModelSpec spec;
  spec.l2 = kL2;
  const auto m = std::move(make_model(spec, {1, 28, 28}, 10)).value();
  REQUIRE(m->num_params() == 784 * 10 + 10);  // softmax: W (784 x 10), then the 10 biases
  auto w = params(*m, 3);
  std::fill(w.end() - 10, w.end(), 2.0f);  // biases far from 0: they must not count
  double squares = 0.0;
  for (std::size_t i = 0; i < 784 * 10; ++i) squares += static_cast<double>(w[i]) * w[i];
  const double penalty = 0.5 * kL2 * squares;
  REQUIRE(penalty > 1e-3);
  // Inline serial (evaluate), inline in blocks (evaluate_blocks), and in the background.
  for (auto [background, parallel] : {std::pair{false, false}, {false, true}, {true, true}}) {
    INFO("background " << background << ", parallel " << parallel);
    const auto row = final_row(*m, data(), background, parallel, w);
    CHECK(row.train_objective - row.train_loss == Approx(penalty).epsilon(1e-5));
    CHECK(row.train_objective == row.train_loss + m->l2_penalty(w));
  }
}

TEST_CASE("evaluator: after a signal only the final snapshot is still evaluated",
          "[engine][evaluator]") {
  const Wrapped m(mlp(), Wrapped::Eval::kHoldIdle);
  for (bool parallel : {false, true}) {
    INFO("parallel " << parallel);
    std::atomic<bool> interrupt{true};
    Evaluator e(m, data(), options(true, parallel));
    for (int i = 0; i < 10; ++i) e.submit(0.5 * i, 10u * i, params(m, i), i == 9);
    m.wait_until_held();
    const auto rows = e.finish(&interrupt);
    // Snapshot 0, which the background thread had under way, and the final one.
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].iteration == 0);
    CHECK(rows[1].iteration == 90);
  }
}

TEST_CASE("evaluator: an exception in a parallel evaluation is kept, and leaves no row",
          "[engine][evaluator]") {
  const Wrapped m(mlp(), Wrapped::Eval::kThrow);
  SECTION("at the end") {
    Evaluator e(m, data(), options(true, true));
    for (int i = 0; i < 5; ++i) e.submit(0.5 * i, 10u * i, params(m, i), i == 4);
    m.wait_until_held();
    const auto rows = e.finish();
    // Only the background thread's snapshot 0; the four left to finish() failed.
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].iteration == 0);
    CHECK(e.failed());
    CHECK(e.failure() == "internal error in the evaluator: no memory for the evaluation");
  }
  SECTION("inline: thrown to the caller, as the serial evaluation does") {
    Evaluator e(m, data(), options(false, true));
    CHECK_THROWS_WITH(e.submit(0.0, 0, params(m, 0)), "no memory for the evaluation");
  }
}
