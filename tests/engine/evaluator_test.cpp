// Evaluator: parallel evaluation (oneTBB blocks) gives the serial rows bit for bit at any thread
// count, inline and for the backlog at the end; train_objective adds the L2 term of the weights
// only; a signal leaves only the final snapshot; an exception becomes failed() and leaves no row.
// Keeping up: a behind evaluator scores snapshots on its catch-up thread while the idle thread
// gets no CPU (held, or every core busy), from the blocks the idle thread has done; sizing cuts
// intermediate snapshots to size_evaluation's samples once behind, never the final one.
#include "engine/evaluator.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
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
  enum class Eval { kThrow, kModelError, kHoldIdle };
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
    if (eval_ == Eval::kModelError) {
      throw ModelError("its forward fails in eval mode: a 500 x 784 view", "the traceback");
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
        // The idle thread holds snapshot 0 and no catch-up thread takes it: finish() evaluates
        // them all as TBB tasks.
        auto o = options(true, true);
        o.catch_up = false;
        Evaluator e(m, data(), o);
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
    auto o = options(true, parallel);
    o.catch_up = false;
    Evaluator e(m, data(), o);
    for (int i = 0; i < 10; ++i) e.submit(0.5 * i, 10u * i, params(m, i), i == 9);
    m.wait_until_held();
    const auto rows = e.finish(&interrupt);
    // The final one alone: finish() took snapshot 0 from the idle thread too, and dropped it.
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].iteration == 90);
  }
}

TEST_CASE("evaluator: an exception in a parallel evaluation is kept, and leaves no row",
          "[engine][evaluator]") {
  const Wrapped m(mlp(), Wrapped::Eval::kThrow);
  SECTION("at the end") {
    auto o = options(true, true);
    o.catch_up = false;
    Evaluator e(m, data(), o);
    for (int i = 0; i < 5; ++i) e.submit(0.5 * i, 10u * i, params(m, i), i == 4);
    m.wait_until_held();
    const auto rows = e.finish();
    // All five were finish()'s (snapshot 0 taken from the held idle thread), and all failed.
    CHECK(rows.empty());
    CHECK(e.failed());
    CHECK(e.failure() == "internal error in the evaluator: no memory for the evaluation");
  }
  SECTION("inline (the virtual clock): kept too, and no later snapshot is evaluated") {
    for (const bool parallel : {true, false}) {
      INFO(parallel);
      Evaluator e(m, data(), options(false, parallel));
      CHECK_NOTHROW(e.submit(0.0, 0, params(m, 0)));
      CHECK(e.failed());
      CHECK_FALSE(e.model_failed());
      CHECK(e.failure() == "internal error in the evaluator: no memory for the evaluation");
      CHECK_NOTHROW(e.submit(1.0, 10, params(m, 1), /*final=*/true));
      CHECK(e.finish().empty());
    }
  }
}

TEST_CASE(
    "evaluator: a ModelError is the model's failure, kept with its line and detail, not an "
    "internal error",
    "[engine][evaluator]") {
  const Wrapped m(mlp(), Wrapped::Eval::kModelError);
  for (const bool background : {false, true}) {
    INFO(background);
    Evaluator e(m, data(), options(background, true));
    e.submit(0.0, 0, params(m, 0));
    CHECK(e.finish().empty());
    CHECK(e.failed());
    CHECK(e.model_failed());
    CHECK(e.failure() == "evaluating a snapshot: its forward fails in eval mode: a 500 x 784 view");
    CHECK(e.failure_detail() == "the traceback");
  }
}

namespace {

// Polls `done` until it holds or ten minutes have passed (a bound only a stuck evaluator
// reaches, not a speed), and returns it.
template <class Done>
bool wait_for(Done done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  while (!done() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return done();
}

// The mlp, as a machine whose cores training keeps busy would make it: the idle thread (the one
// at SCHED_IDLE) scores `idle_blocks` blocks and is then held until release(); and a gate that,
// while closed, holds every other thread's evaluation. Counts the blocks each side scored.
class Controlled final : public test::ForwardingModel {
 public:
  Controlled(std::unique_ptr<Model> inner, int idle_blocks)
      : ForwardingModel(std::move(inner)), idle_blocks_(idle_blocks) {}
  EvalSums evaluate_sums(std::span<const float> w, const Split& data, std::size_t first,
                         std::size_t count, Workspace& ws) const override {
    const auto idle = [] { return (sched_getscheduler(0) & ~SCHED_RESET_ON_FORK) == SCHED_IDLE; };
    if (idle()) {
      std::unique_lock lock(mu_);
      if (idle_done_ >= idle_blocks_) {
        held_ = true;
        cv_.notify_all();
        cv_.wait(lock, [&] { return released_; });
      } else {
        ++idle_done_;
      }
    } else {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return open_; });
      ++other_done_;
    }
    return inner().evaluate_sums(w, data, first, count, ws);
  }
  void wait_until_held() const {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return held_; });
  }
  void release() { set(released_, true); }
  void close() { set(open_, false); }
  void open() { set(open_, true); }
  int idle_done() const {
    std::lock_guard lock(mu_);
    return idle_done_;
  }
  int other_done() const {
    std::lock_guard lock(mu_);
    return other_done_;
  }

 private:
  void set(bool& flag, bool value) {
    {
      std::lock_guard lock(mu_);
      flag = value;
    }
    cv_.notify_all();
  }
  const int idle_blocks_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  mutable int idle_done_ = 0, other_done_ = 0;  // GUARDED_BY(mu_)
  mutable bool held_ = false;                   // GUARDED_BY(mu_)
  bool released_ = false, open_ = true;         // GUARDED_BY(mu_)
};

// Blocks of one snapshot of data() at eval_batch 200: 7 test, 6 train, 4 held-out.
constexpr int kBlocks = 7 + 6 + 4;

}  // namespace

TEST_CASE("evaluator: size_evaluation cuts test and train by one fraction, in whole batches",
          "[engine][evaluator][sizing]") {
  const EvalPlan full{10000, 10000};
  // It fits, or there is no cost to go by: everything.
  CHECK(size_evaluation(full, 0, 500, 1e-6, 1.0) == full);
  CHECK(size_evaluation(full, 0, 500, 0.0, 1e-9) == full);
  CHECK(size_evaluation(full, 0, 500, 1e-4, 2.0) == full);  // exactly 2 s: fits
  // 0.25 s at 0.1 ms a sample: 2500 samples, 1250 each, down to whole batches of 500.
  CHECK(size_evaluation(full, 0, 500, 1e-4, 0.25) == EvalPlan{1000, 1000});
  // One fraction for both: a quarter of each.
  CHECK(size_evaluation({10000, 2000}, 0, 500, 1e-4, 0.3) == EvalPlan{2500, 500});
  // The held-out samples, always whole, come out of the budget first.
  CHECK(size_evaluation(full, 2000, 500, 1e-4, 0.4) == EvalPlan{1000, 1000});
  // At least one batch each, or all of a split smaller than one.
  CHECK(size_evaluation(full, 0, 500, 1e-4, 1e-6) == EvalPlan{500, 500});
  CHECK(size_evaluation({300, 10000}, 0, 500, 1e-4, 1e-6) == EvalPlan{300, 500});
  CHECK(size_evaluation(full, 50000, 500, 1e-4, 0.4) == EvalPlan{500, 500});
}

TEST_CASE("evaluator: behind, the catch-up thread scores from the idle thread's blocks on",
          "[engine][evaluator][keep-up]") {
  Controlled m(mlp(), /*idle_blocks=*/2);
  const auto serial = inline_rows(m, false, 2);  // the full rows of snapshots 0 and 1
  const int inline_blocks = m.other_done();
  auto o = options(true, true);
  o.eval_every_s = 1000.0;  // behind only by the backlog: two waiting
  Evaluator e(m, data(), o);
  e.start_clock(std::chrono::steady_clock::now());
  e.submit(0.0, 0, params(m, 0));
  // The idle thread has scored two blocks of snapshot 0, and gets no further (as on busy cores).
  m.wait_until_held();
  CHECK(e.stats().behind == 0);  // one snapshot waiting, for less than --eval-every
  CHECK(e.ready(0).empty());
  e.submit(0.5, 10, params(m, 1));  // two waiting: behind
  REQUIRE(wait_for([&] { return e.ready(0).size() == 2; }));
  const auto st = e.stats();
  CHECK(st.behind == 1);
  CHECK(st.caught_up == 2);
  CHECK_FALSE(st.sized);  // sizing is off
  // Snapshot 0 from its third block on, then all of snapshot 1: no block scored twice.
  CHECK(m.idle_done() == 2);
  CHECK(m.other_done() - inline_blocks == (kBlocks - 2) + kBlocks);
  const auto rows = e.ready(0);
  check_identical(rows, serial);
  for (const auto& r : rows) {
    CHECK(r.test_samples == 1234);
    CHECK(r.train_samples == 1100);
    CHECK(r.scored_s > 0.0);
  }
  m.release();
  CHECK(e.finish().size() == 2);
}

TEST_CASE("evaluator: behind, snapshots are scored while a busy loop occupies every core",
          "[engine][evaluator][keep-up]") {
  const auto m = mlp();
  const auto serial = inline_rows(*m, false, 3);
  auto o = options(true, true);
  o.eval_every_s = 0.05;
  // Busy loops at normal priority on every core: the idle thread gets (next to) nothing.
  std::atomic<bool> spin{true};  // relaxed: a stop signal, carrying no data
  std::vector<std::thread> loops;
  for (unsigned i = 0; i < std::max(1u, std::thread::hardware_concurrency()); ++i) {
    loops.emplace_back([&] {
      while (spin.load(std::memory_order_relaxed)) {
      }
    });
  }
  Evaluator e(*m, data(), o);
  for (int i = 0; i < 3; ++i) e.submit(0.5 * i, 10u * i, params(*m, i));
  const bool scored_while_busy = wait_for([&] { return e.ready(0).size() == 3; });
  spin.store(false, std::memory_order_relaxed);
  for (auto& t : loops) t.join();
  CHECK(scored_while_busy);
  CHECK(e.stats().behind >= 1);
  CHECK(e.stats().caught_up >= 1);
  check_identical(e.finish(), serial);
}

TEST_CASE("evaluator: sizing cuts the intermediate snapshots once behind, never the final one",
          "[engine][evaluator][sizing]") {
  Controlled m(mlp(), /*idle_blocks=*/0);  // the idle thread scores nothing
  auto o = options(true, true);
  o.sizing = true;
  o.sample_cost_s = 1.0;  // a second a sample: only the smallest evaluation, in any budget
  o.eval_every_s = 1e-3;  // a snapshot is behind a millisecond after it was taken
  Evaluator e(m, data(), o);
  auto st = e.stats();
  CHECK(st.full == EvalPlan{1234, 1100});
  CHECK(st.sized_plan == EvalPlan{200, 200});
  CHECK_FALSE(st.sized);
  // One at a time: each scored by the catch-up thread once it is behind, on 200 + 200 samples
  // (snapshot 0 was taken on the full ones, and cut when the evaluator fell behind).
  for (int i = 0; i < 3; ++i) {
    e.submit(0.5 * i, 10u * i, params(m, i));
    REQUIRE(wait_for([&] { return e.ready(0).size() == static_cast<std::size_t>(i + 1); }));
  }
  st = e.stats();
  CHECK(st.sized);
  CHECK(st.caught_up == 3);
  // Sized, the backlog holds two: with nothing scored meanwhile, a third is skipped.
  m.close();
  for (int i = 3; i < 6; ++i) e.submit(0.5 * i, 10u * i, params(m, i));
  CHECK(e.skipped() == 1);
  m.open();
  e.submit(3.0, 60, params(m, 6), /*final=*/true);
  m.release();
  const auto rows = e.finish();
  REQUIRE(rows.size() == 6);
  auto ws = m.make_workspace(200);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    INFO("row " << i);
    const bool final = i + 1 == rows.size();
    const auto w = params(m, rows[i].iteration / 10);
    const std::size_t test = final ? 1234 : 200, train = final ? 1100 : 200;
    CHECK(rows[i].test_samples == test);
    CHECK(rows[i].train_samples == train);
    // The first samples of each split, bit for bit Model::evaluate's; the held-out ones whole.
    CHECK(rows[i].test_loss == m.evaluate(w, data().test, *ws, test).loss);
    CHECK(rows[i].test_error == m.evaluate(w, data().test, *ws, test).error);
    CHECK(rows[i].train_loss == m.evaluate(w, data().train, *ws, train).loss);
    CHECK(rows[i].val_error == m.evaluate(w, data().val, *ws, 0).error);
  }
  CHECK(rows.back().iteration == 60);
}

TEST_CASE("evaluator: inline rows are scored at their own time, on the full samples",
          "[engine][evaluator]") {
  const auto m = mlp();
  auto o = options(false, true);
  o.sizing = true;  // no effect inline (the virtual clock)
  o.sample_cost_s = 1.0;
  Evaluator e(*m, data(), o);
  e.submit(2.5, 7, params(*m, 1));
  const auto rows = e.finish();
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].scored_s == 2.5);
  CHECK(rows[0].test_samples == 1234);
  CHECK(rows[0].train_samples == 1100);
}
