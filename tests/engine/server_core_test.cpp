// ServerCore fed hand-made gradients: the update against a double reference, the update and
// gradient records (staleness), the dutta:c=C learning rate, divergence, AdaSync, count().
#include "engine/server_core.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "engine/engine_test_util.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

namespace {

// A softmax on 2x2 single-channel images, 3 classes: 15 parameters. ServerCore never reads the
// data, only the model's size, so the data set is empty.
Dataset tiny_dataset() {
  Dataset d;
  d.name = "mnist";
  d.num_classes = 3;
  d.train.shape = {1, 2, 2};
  d.test.shape = {1, 2, 2};
  return d;
}

TrainerOptions options(const std::string& rule, int workers, int k, double lr) {
  TrainerOptions o;
  o.model.name = "softmax";
  o.rule = {rule, k};
  o.workers = workers;
  o.lr = lr;
  o.iterations = 100;
  o.progress = false;
  return o;
}

// Deterministic, distinct vectors: v_i = scale * sin(seed + i).
std::vector<float> vec(std::size_t n, double seed, double scale = 1.0) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(scale * std::sin(seed + i));
  return v;
}

// Everything one ServerCore needs, built by hand as train() would.
struct Server {
  explicit Server(const TrainerOptions& o)
      : run(resolve_ok(o)),
        ctx{run, run.options(), data, softmax_for(data), {}, nullptr},
        store((ctx.initial = vec(ctx.model->num_params(), 0.3, 0.5), ctx.initial)),
        core(ctx, store, record) {
    (void)core.begin();
  }
  std::vector<float> current() const {
    const auto c = store.current();
    return {c.begin(), c.end()};
  }

  Dataset data = tiny_dataset();
  ResolvedRun run;
  RunContext ctx;
  ParameterStore store;
  RunRecord record;
  ServerCore core;
};

// w - (sum lr_i g_i) / K in double precision.
std::vector<double> reference(const std::vector<float>& w, const std::vector<std::vector<float>>& g,
                              const std::vector<double>& lr) {
  std::vector<double> out(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) {
    double sum = 0.0;
    for (std::size_t j = 0; j < g.size(); ++j) sum += lr[j] * static_cast<double>(g[j][i]);
    out[i] = static_cast<double>(w[i]) - sum / static_cast<double>(g.size());
  }
  return out;
}

void check_close(std::span<const float> got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("parameter " << i);
    CHECK(static_cast<double>(got[i]) == Approx(want[i]).margin(1e-6).epsilon(1e-6));
  }
}

double distance_sq(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double x = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    d += x * x;
  }
  return d;
}

}  // namespace

TEST_CASE("k-sync K = 2: w_1 = w_0 - lr (g_a + g_b) / 2, one update and two gradient records",
          "[engine][server_core]") {
  Server s(options("k-sync", 3, 2, 0.1));
  const auto w0 = s.ctx.initial;
  REQUIRE(w0.size() == 15);
  const auto ga = vec(w0.size(), 1.0), gb = vec(w0.size(), 2.0, 3.0);

  auto a = s.core.on_gradient(0.5, 1, 0, 2.0f, 0.5 / 2, ga, w0);
  REQUIRE(a.ok());
  CHECK_FALSE(a->step.decision.apply);
  CHECK(a->version == 0);
  CHECK(s.store.version() == 0);
  CHECK(s.record.updates.empty());

  auto b = s.core.on_gradient(0.75, 2, 0, 3.0f, 0.75 / 2, gb, w0);
  REQUIRE(b.ok());
  CHECK(b->step.decision.apply);
  CHECK(b->version == 1);
  CHECK(s.store.version() == 1);
  check_close(s.store.current(), reference(w0, {ga, gb}, {0.1, 0.1}));
  // Worker 0 was still computing: cut; 1 and 2 restart on w_1.
  REQUIRE(b->step.start.size() == 3);
  CHECK(b->step.start[0].cut);
  CHECK_FALSE(b->step.start[1].cut);
  CHECK_FALSE(b->step.start[2].cut);

  REQUIRE(s.record.updates.size() == 1);
  const auto& u = s.record.updates[0];
  CHECK(u.iteration == 1);
  CHECK(u.wall_s == 0.75);
  CHECK(u.n_grads == 2);
  CHECK(u.lr == Approx(0.1));
  CHECK(u.minibatch_loss == Approx(2.5));
  CHECK(u.mean_staleness == 0.0);
  CHECK(u.max_staleness == 0);
  REQUIRE(s.record.gradients.size() == 2);
  CHECK(s.record.gradients[0].iteration == 1);
  CHECK(s.record.gradients[0].worker == 1);
  CHECK(s.record.gradients[0].computed_on == 0);
  CHECK(s.record.gradients[0].staleness == 0);
  CHECK(s.record.gradients[0].duration_s == 0.25);  // as given: the engine measures it
  CHECK(s.record.gradients[1].worker == 2);
  CHECK(s.record.gradients[1].staleness == 0);
  CHECK(s.core.mean_staleness() == 0.0);
}

TEST_CASE("mindflayer divides by the expected count as published, mindflayer-kept by the count",
          "[engine][server_core]") {
  for (const std::string rule : {"mindflayer", "mindflayer-kept"}) {
    INFO(rule);
    // P = 2 workers, B = 2 attempts, t = 20 ms on exp(mean 10 ms) delays: P(X <= t) = 1 - e^-2.
    auto o = options(rule, 2, 2, 0.1);
    o.rule.params.set("time-limit", std::string("20ms"));
    o.delay = "exp:mean=10ms";
    Server s(o);
    const auto w0 = s.ctx.initial;
    const auto ga = vec(w0.size(), 1.0), gb = vec(w0.size(), 2.0), gc = vec(w0.size(), 3.0);
    // Worker 0: one attempt abandoned, then one kept (two attempts in one push); worker 1: two
    // kept; the round ends with three gradients.
    REQUIRE_FALSE(
        s.core.on_gradient(0.03, 0, 0, 1.0f, 0.01, ga, w0, 2, false)->step.decision.apply);
    REQUIRE_FALSE(
        s.core.on_gradient(0.01, 1, 0, 1.0f, 0.01, gb, w0, 1, false)->step.decision.apply);
    REQUIRE(s.core.on_gradient(0.02, 1, 0, 1.0f, 0.01, gc, w0, 1, false)->step.decision.apply);
    const double divisor = rule == "mindflayer" ? 2 * 2 * (1.0 - std::exp(-2.0)) : 3.0;
    std::vector<double> want(w0.size());
    for (std::size_t i = 0; i < w0.size(); ++i) {
      want[i] = w0[i] - 0.1 * (static_cast<double>(ga[i]) + gb[i] + gc[i]) / divisor;
    }
    check_close(s.store.current(), want);
    CHECK(s.record.updates.at(0).n_grads == 3);
  }
}

TEST_CASE("k-async records staleness = current - computed_on", "[engine][server_core]") {
  Server s(options("k-async", 3, 2, 0.2));
  const auto w0 = s.ctx.initial;
  const std::size_t n = w0.size();
  REQUIRE(s.core.on_gradient(0.1, 0, 0, 1.0f, 0.1 / 2, vec(n, 1.0), w0).ok());
  REQUIRE(s.core.on_gradient(0.2, 1, 0, 1.0f, 0.2 / 2, vec(n, 2.0), w0).ok());
  REQUIRE(s.store.version() == 1);
  const auto w1 = s.current();
  // Worker 2 computed on w_0 and arrives at version 1; worker 0 on w_1.
  const auto gc = vec(n, 3.0), gd = vec(n, 4.0);
  REQUIRE(s.core.on_gradient(0.3, 2, 0, 2.0f, 0.3 / 2, gc, w0).ok());
  auto up = s.core.on_gradient(0.4, 0, 1, 4.0f, 0.4 / 2, gd, w1);
  REQUIRE(up.ok());
  CHECK(up->version == 2);
  check_close(s.store.current(), reference(w1, {gc, gd}, {0.2, 0.2}));

  REQUIRE(s.record.updates.size() == 2);
  const auto& u = s.record.updates[1];
  CHECK(u.iteration == 2);
  CHECK(u.n_grads == 2);
  CHECK(u.max_staleness == 1);
  CHECK(u.mean_staleness == Approx(0.5));
  CHECK(u.minibatch_loss == Approx(3.0));
  REQUIRE(s.record.gradients.size() == 4);
  CHECK(s.record.gradients[2].iteration == 2);
  CHECK(s.record.gradients[2].worker == 2);
  CHECK(s.record.gradients[2].computed_on == 0);
  CHECK(s.record.gradients[2].staleness == 1);
  CHECK(s.record.gradients[3].worker == 0);
  CHECK(s.record.gradients[3].computed_on == 1);
  CHECK(s.record.gradients[3].staleness == 0);
  CHECK(s.core.mean_staleness() == Approx(0.25));  // 0, 0, 1, 0
}

TEST_CASE("dutta:c=C rates a stale gradient by min(C / ||w_j - w_tau||^2, lr)",
          "[engine][server_core]") {
  const double lr = 0.5, c = 0.01;
  auto o = options("k-async", 3, 2, lr);
  o.lr_rule = "dutta:c=0.01";
  Server s(o);
  const auto w0 = s.ctx.initial;
  const std::size_t n = w0.size();
  REQUIRE(s.core.on_gradient(0.1, 0, 0, 1.0f, 0.1 / 2, vec(n, 1.0), w0).ok());
  REQUIRE(s.core.on_gradient(0.2, 1, 0, 1.0f, 0.2 / 2, vec(n, 2.0), w0).ok());
  CHECK(s.record.updates[0].lr == Approx(lr));  // fresh gradients get the cap
  const auto w1 = s.current();
  const double d = distance_sq(w1, w0);
  const double stale_lr = c / d;
  REQUIRE(stale_lr < lr);  // else the test would not see the distance

  const auto gc = vec(n, 3.0), gd = vec(n, 4.0);
  // Worker 2's gradient was computed on w_0, which differs from the current w_1.
  REQUIRE(s.core.on_gradient(0.3, 2, 0, 1.0f, 0.3 / 2, gc, w0).ok());
  REQUIRE(s.core.on_gradient(0.4, 0, 1, 1.0f, 0.4 / 2, gd, w1).ok());
  REQUIRE(s.record.updates.size() == 2);
  CHECK(s.record.updates[1].lr == Approx((stale_lr + lr) / 2).epsilon(1e-5));
  check_close(s.store.current(), reference(w1, {gc, gd}, {stale_lr, lr}));
}

TEST_CASE("a non-finite loss is an Error naming the iteration", "[engine][server_core]") {
  Server s(options("async", 2, 0, 0.1));
  const auto w0 = s.ctx.initial;
  const auto g = vec(w0.size(), 1.0);
  REQUIRE(s.core.on_gradient(0.1, 0, 0, 1.0f, 0.1 / 2, g, w0).ok());
  REQUIRE(s.store.version() == 1);
  for (const float loss : {std::nanf(""), INFINITY}) {
    auto r = s.core.on_gradient(0.2, 1, 0, loss, 0.1, g, w0);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Contains("diverged at iteration 2:"));
    CHECK_THAT(r.error().message, Contains("worker 1"));
    CHECK(s.store.version() == 1);  // nothing applied
    CHECK(s.record.updates.size() == 1);
  }
}

TEST_CASE("AdaSync raises K once the window's mean loss falls, never past P",
          "[engine][server_core]") {
  auto o = options("k-async", 4, 1, 0.1);
  o.adasync_every_s = 1.0;
  Server s(o);
  const auto w0 = s.ctx.initial;
  const auto g = vec(w0.size(), 1.0);
  REQUIRE(s.core.rule().k() == 1);
  // The first window (up to 1 s) holds only F(w_0) = 4: K stays ceil(1 * sqrt(4 / 4)) = 1.
  REQUIRE(s.core.on_gradient(1.0, 0, 0, 4.0f, 1.0 / 2, g, w0).ok());
  CHECK(s.core.rule().k() == 1);
  // Within the next window nothing changes before 2 s.
  REQUIRE(s.core.on_gradient(1.5, 1, 0, 1.0f, 1.5 / 2, g, w0).ok());
  CHECK(s.core.rule().k() == 1);
  // Window (1 s, 2 s]: mean loss 1, so K = ceil(1 * sqrt(4 / 1)) = 2.
  REQUIRE(s.core.on_gradient(2.0, 2, 0, 1.0f, 2.0 / 2, g, w0).ok());
  CHECK(s.core.rule().k() == 2);
  // The next update takes two gradients.
  auto one = s.core.on_gradient(2.1, 3, 0, 1.0f, 2.1 / 2, g, w0);
  REQUIRE(one.ok());
  CHECK_FALSE(one->step.decision.apply);
  auto two = s.core.on_gradient(2.2, 0, 1, 1.0f, 2.2 / 2, g, w0);
  REQUIRE(two.ok());
  CHECK(two->step.decision.apply);
  CHECK(s.record.updates.back().n_grads == 2);
  // Window (2 s, 3 s]: still mean loss 1, K stays 2.
  REQUIRE(s.core.on_gradient(3.0, 1, 2, 1.0f, 3.0 / 2, g, w0).ok());
  REQUIRE(s.core.on_gradient(3.0, 2, 3, 1.0f, 3.0 / 2, g, w0).ok());
  CHECK(s.core.rule().k() == 2);
  // Window (3 s, 4 s]: a loss 10000 times smaller asks for K = 100, capped at P = 4.
  REQUIRE(s.core.on_gradient(4.0, 3, 4, 0.0004f, 4.0 / 2, g, w0).ok());
  REQUIRE(s.core.on_gradient(4.0, 0, 4, 0.0004f, 4.0 / 2, g, w0).ok());
  CHECK(s.core.rule().k() == 4);
}

TEST_CASE("count() fills started, pushed, applied and cancelled per worker",
          "[engine][server_core]") {
  Server s(options("k-sync", 3, 2, 0.1));
  const auto w0 = s.ctx.initial;
  const auto g = vec(w0.size(), 1.0);
  REQUIRE(s.core.on_gradient(0.1, 0, 0, 1.0f, 0.1 / 2, g, w0).ok());
  REQUIRE(s.core.on_gradient(0.2, 1, 0, 1.0f, 0.2 / 2, g, w0).ok());  // update 1: cuts 2
  REQUIRE(s.core.on_gradient(0.3, 2, 1, 1.0f, 0.3 / 2, g, w0).ok());  // pending in round 2
  WorkerRecord r;
  s.core.count(0, r);
  CHECK(r.worker == 0);
  CHECK(r.started == 2);
  CHECK(r.pushed == 1);
  CHECK(r.applied == 1);
  CHECK(r.cancelled == 0);
  s.core.count(2, r);
  CHECK(r.worker == 2);
  CHECK(r.started == 2);
  CHECK(r.pushed == 1);
  CHECK(r.applied == 0);  // pushed, not yet in an update
  CHECK(r.cancelled == 1);
  REQUIRE(s.core.on_gradient(0.4, 1, 1, 1.0f, 0.4 / 2, g, w0).ok());  // update 2: cuts 0
  s.core.count(0, r);
  CHECK(r.started == 3);
  CHECK(r.cancelled == 1);
  s.core.count(2, r);
  CHECK(r.applied == 1);
  s.core.count(1, r);
  CHECK(r.started == 3);
  CHECK(r.pushed == 2);
  CHECK(r.applied == 2);
  CHECK(r.cancelled == 0);
}
