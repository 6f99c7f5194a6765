// A run with --holdout N trains on the training split less its last N samples and evaluates
// those N at every snapshot (evals.csv val_loss, val_error). Shown by poisoning the held-out
// samples with NaN: the run that holds them out stays finite, the same run without the holdout
// samples them and diverges; and the val columns are the model's loss and error on the clean
// samples, to the last bit of the evaluation.
#include <cmath>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "engine/engine_test_util.hpp"
#include "stalesgd/data/holdout.hpp"
#include "support/csv_column.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

namespace {

constexpr std::size_t kHeld = 2000;

TrainerOptions virtual_async(std::size_t holdout) {
  auto o = quick_options("async", 4, 1, "exp:mean=10ms");
  o.clock = ClockKind::kVirtual;
  o.iterations = 400;
  o.eval_every_s = 0.5;
  o.holdout = holdout;
  o.seed = 3;
  return o;
}

}  // namespace

TEST_CASE("holdout run: the held-out samples are never trained on", "[engine][holdout]") {
  Dataset poisoned = mnist();
  const std::size_t first = poisoned.train.count - kHeld;
  std::fill(
      poisoned.train.features.begin() + static_cast<std::ptrdiff_t>(first * poisoned.train.dim()),
      poisoned.train.features.end(), std::numeric_limits<float>::quiet_NaN());

  // 400 minibatches of 16 from 60000 samples meet one of the 2000 poisoned ones for certain.
  const auto sampled = train(virtual_async(0), poisoned);
  REQUIRE(sampled);
  CHECK(sampled->stop_reason == StopReason::kDiverged);

  const auto held = train(virtual_async(kHeld), poisoned);
  REQUIRE(held);
  CHECK(held->stop_reason == StopReason::kIterations);
  REQUIRE_FALSE(held->evals.empty());
  CHECK(std::isfinite(held->evals.back().test_loss));
  CHECK(held->evals.back().test_error < 0.5);
  CHECK(std::isnan(held->evals.back().val_loss));  // the poison is what it evaluates
}

TEST_CASE("holdout run: val_loss and val_error are the model's on the held-out samples",
          "[engine][holdout]") {
  const auto run = train(virtual_async(kHeld), mnist());
  REQUIRE(run);
  REQUIRE(run->evals.size() >= 2);
  const auto split = with_holdout(mnist(), kHeld);
  REQUIRE(split);
  const auto model = softmax_for(mnist());
  auto ws = model->make_workspace(500);
  const auto want = model->evaluate(run->final_params, split->val, *ws, 0);
  CHECK(run->evals.back().val_loss == Approx(want.loss).epsilon(1e-12));
  CHECK(run->evals.back().val_error == want.error);
  CHECK(run->evals.front().val_error > run->evals.back().val_error);

  const auto plain = train(virtual_async(0), mnist());
  REQUIRE(plain);
  CHECK(std::isnan(plain->evals.back().val_loss));
  CHECK(std::isnan(plain->evals.back().val_error));
}

TEST_CASE("holdout run: train --holdout writes val columns and refuses a holdout of every sample",
          "[cli][holdout]") {
  TempDir dir;
  const auto r = run_cli({"train",        "--no-progress",
                          "--model",      "softmax",
                          "--rule",       "async",
                          "--workers",    "2",
                          "--delay",      "exp:mean=10ms",
                          "--clock",      "virtual",
                          "--iterations", "60",
                          "--eval-every", "0.1s",
                          "--holdout",    "5000",
                          "--out",        dir.path().string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  std::ifstream evals(dir / "evals.csv");
  std::string header;
  std::getline(evals, header);
  CHECK(header ==
        "wall_s,iteration,train_loss,test_loss,test_error,train_objective,val_loss,val_error,"
        "scored_s,test_samples,train_samples");
  const auto val_error = csv_column(dir / "evals.csv", "val_error");
  REQUIRE(val_error.size() >= 2);
  for (double v : val_error) CHECK((v >= 0.0 && v <= 1.0));
  std::ifstream in(dir / "summary.json");
  const auto j = nlohmann::json::parse(in);
  CHECK(j["config"]["holdout"] == 5000);
  CHECK(j["final_val_error"].get<double>() == Approx(val_error.back()).epsilon(1e-5));

  const auto all = run_cli({"train", "--no-progress", "--model", "softmax", "--rule", "async",
                            "--workers", "2", "--iterations", "10", "--holdout", "60000"});
  CHECK(all.exit_code != 0);
  CHECK_THAT(all.output, Catch::Matchers::Contains(
                             "stalesgd: error: --holdout 60000 leaves no training sample: mnist "
                             "has 60000"));
}
