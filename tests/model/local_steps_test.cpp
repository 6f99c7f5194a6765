// LocalSteps (--local-steps, --local-lr): a job's change is Q local SGD steps on consecutive
// slices of its samples, and a run with them is local SGD on every in-process engine.
#include "model/local_steps.hpp"

#include <catch2/catch.hpp>

#include <cmath>

#include "engine/engine_test_util.hpp"
#include "stalesgd/data/sampler.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

TEST_CASE("local steps: the job's change is Q SGD steps on consecutive minibatches",
          "[model][local_steps]") {
  const Dataset& data = mnist();
  ModelSpec softmax;
  softmax.name = "softmax";
  auto made = make_model(softmax, data.train.shape, data.num_classes);
  REQUIRE(made);
  const Model& plain = **made;
  auto local = make_local_steps(make_model(softmax, data.train.shape, data.num_classes).value(), 3,
                                0.1, data.train.dim());
  std::vector<float> w(plain.num_params());
  plain.init_params(w, 5);
  MinibatchSampler jobs(data.train, 3 * 16, 9);
  const Batch job = jobs.next();

  std::vector<float> change(w.size());
  auto ws = local->make_workspace(16);
  const auto loss = local->loss_and_gradient(w, job, change, *ws);
  REQUIRE(loss);

  // By hand: three steps of 0.1 on samples 0-15, 16-31 and 32-47 of the job.
  std::vector<float> y = w, g(w.size());
  auto pws = plain.make_workspace(16);
  double sum = 0;
  for (int q = 0; q < 3; ++q) {
    const Batch part{job.features + q * 16 * data.train.dim(), job.labels + q * 16, 16,
                     job.seed + static_cast<std::uint64_t>(q)};
    sum += *plain.loss_and_gradient(y, part, g, *pws);
    for (std::size_t i = 0; i < y.size(); ++i) y[i] -= 0.1f * g[i];
  }
  CHECK(*loss == Approx(sum / 3));
  // Up to a rounding: the compiler may fuse the step's multiply-add in one loop, not the other.
  for (std::size_t i = 0; i < w.size(); ++i) {
    REQUIRE(change[i] == Approx(w[i] - y[i]).margin(1e-6));
  }
  // Evaluation is the wrapped model's.
  auto ews = local->make_workspace(100);
  auto pews = plain.make_workspace(100);
  CHECK(local->evaluate(w, data.test, *ews, 500).loss ==
        plain.evaluate(w, data.test, *pews, 500).loss);
}

TEST_CASE("local steps: P = 1 sync with --lr 1 is local SGD of --local-lr on every engine",
          "[model][local_steps][engine]") {
  const auto engine = GENERATE(from_range(in_process_engines()));
  INFO(engine.describe());
  auto o = quick_options("sync", 1, 0, "none");
  engine.apply(o);
  o.iterations = 40;
  o.local_steps = 4;
  o.local_lr = 0.1;
  o.lr = 1.0;
  if (o.clock == ClockKind::kVirtual) o.compute_time_s = 0.001;
  const auto local = run_ok(o);
  auto s = quick_options("sync", 1, 0, "none");
  s.sequential = true;
  s.iterations = 160;
  s.lr = 0.1;
  const auto seq = run_ok(s);
  REQUIRE(local.updates.size() == 40);
  REQUIRE(local.final_params.size() == seq.final_params.size());
  // w - 1 * (w - y) is y up to a rounding per update.
  double worst = 0;
  for (std::size_t i = 0; i < seq.final_params.size(); ++i) {
    worst = std::max(worst, std::abs(double(local.final_params[i]) - seq.final_params[i]));
  }
  CHECK(worst < 1e-4);
  // And it is not plain SGD with one gradient per update.
  auto one = s;
  one.iterations = 40;
  const auto fewer = run_ok(one);
  double apart = 0;
  for (std::size_t i = 0; i < seq.final_params.size(); ++i) {
    apart = std::max(apart, std::abs(double(fewer.final_params[i]) - seq.final_params[i]));
  }
  CHECK(apart > 100 * worst);
}

TEST_CASE("local steps: a FedBuff job on the virtual clock takes its Q minibatches' delays",
          "[model][local_steps][engine]") {
  auto o = quick_options("fedbuff", 4, 2, "const:2ms;w3=const:5ms");
  o.clock = ClockKind::kVirtual;
  o.iterations = 30;
  o.local_steps = 3;
  o.local_lr = 0.05;
  o.lr = 1.0;
  const auto run = run_ok(o);
  REQUIRE(!run.gradients.empty());
  for (const auto& g : run.gradients) {
    INFO("worker " << g.worker);
    CHECK(g.duration_s == Approx(g.worker == 3 ? 0.015 : 0.006));
  }
}
