// --model torchscript:PATH: a scripted module exported by tools/export_model.py against the
// built-in models (same gradient, same run), in every engine, and its bad inputs. A build
// without the plugin (no LibTorch, or the ThreadSanitizer build) checks its one-line refusal.
#include <catch2/catch.hpp>

#include <cmath>

#include "engine/engine_test_util.hpp"
#include "stalesgd/model/model.hpp"
#include "stalesgd/util/seed.hpp"
#include "support/fixtures.hpp"
#include "support/summary.hpp"
#include "support/torchscript_files.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

#ifndef STALESGD_HAVE_TORCHSCRIPT

TEST_CASE("torchscript: a build without the plugin says how to get it", "[model][torchscript]") {
  TempDir dir;
  write_bytes(dir / "m.pt", {1, 2, 3});
  const auto m = make_model({"torchscript:" + (dir / "m.pt").string(), {}, 0.0f}, {1, 28, 28}, 10);
  REQUIRE_FALSE(m.ok());
  CHECK_THAT(m.error().message, Contains("needs LibTorch") && Contains("libtorch-dev"));
}

#else

namespace {

// ||a - b|| / ||b||
double relative_difference(std::span<const float> a, std::span<const float> b) {
  double diff = 0.0;
  double norm = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    norm += double(b[i]) * b[i];
  }
  return std::sqrt(diff / norm);
}

std::unique_ptr<Model> torchscript_model(const fs::path& file, const Dataset& data) {
  auto m =
      make_model({"torchscript:" + file.string(), {}, 0.0f}, data.train.shape, data.num_classes);
  if (!m) FAIL(m.error().message);
  return std::move(m).value();
}

const std::vector<int> kMlpSizes{784, 128, 10};

// The built-in mlp at `seed`, and its twin in a TorchScript file with the same weights.
std::pair<std::unique_ptr<Model>, std::vector<float> > builtin_mlp(std::uint64_t seed) {
  auto m = make_model({"mlp", {128}, 0.0f}, {1, 28, 28}, 10);
  REQUIRE(m.ok());
  std::vector<float> w((*m)->num_params());
  (*m)->init_params(w, seed);
  return {std::move(m).value(), std::move(w)};
}

}  // namespace

TEST_CASE("torchscript: an exported mlp gives the built-in mlp's loss and gradient",
          "[model][torchscript]") {
  leak_check_before_libtorch();
  TempDir dir;
  const auto [builtin, w] = builtin_mlp(11);
  export_with_weights(dir / "mlp.pt", "mlp", mlp_to_torch(w, kMlpSizes), "--hidden 128");
  const auto ts = torchscript_model(dir / "mlp.pt", mnist());
  REQUIRE(ts->num_params() == builtin->num_params());
  std::vector<float> start(ts->num_params());
  ts->init_params(start, 0);
  CHECK(mlp_from_torch(start, kMlpSizes) == w);  // the file's weights are where a run starts

  for (int first : {0, 1000, 30000}) {
    INFO("minibatch of 64 from sample " << first);
    const Batch batch{mnist().train.sample(first), mnist().train.labels.data() + first, 64};
    auto bws = builtin->make_workspace(64);
    auto tws = ts->make_workspace(64);
    std::vector<float> gb(w.size());
    std::vector<float> gt(w.size());
    const auto lb = builtin->loss_and_gradient(w, batch, gb, *bws);
    const auto lt = ts->loss_and_gradient(start, batch, gt, *tws);
    REQUIRE((lb && lt));
    CHECK(std::abs(*lt - *lb) <= 1e-5 * std::abs(*lb));
    const double rel = relative_difference(mlp_from_torch(gt, kMlpSizes), gb);
    INFO("relative gradient difference " << rel);
    CHECK(rel <= 1e-5);
  }
  // Evaluation: the same loss and errors over 2000 test samples, in chunks of 256.
  auto bws = builtin->make_workspace(256);
  auto tws = ts->make_workspace(256);
  const auto eb = builtin->evaluate(w, mnist().test, *bws, 2000);
  const auto et = ts->evaluate(start, mnist().test, *tws, 2000);
  CHECK(std::abs(et.loss - eb.loss) <= 1e-5 * eb.loss);
  CHECK(et.error == eb.error);
}

TEST_CASE("torchscript: a sequential run's losses are the built-in mlp's", "[model][torchscript]") {
  leak_check_before_libtorch();
  TempDir dir;
  const std::uint64_t seed = 5;
  const auto [builtin, w] = builtin_mlp(derive_seed(seed, SeedStream::kModelInit));
  export_with_weights(dir / "mlp.pt", "mlp", mlp_to_torch(w, kMlpSizes), "--hidden 128");
  auto o = quick_options("sync", 1, 1, "none");
  o.sequential = true;
  o.seed = seed;
  o.iterations = 150;
  o.batch = 32;
  o.lr = 0.1;
  o.model.name = "mlp";
  o.model.hidden = {128};
  const auto a = run_ok(o);
  o.model.name = "torchscript:" + (dir / "mlp.pt").string();
  o.model.hidden.clear();
  const auto b = run_ok(o);
  REQUIRE(a.updates.size() == 150);
  REQUIRE(b.updates.size() == 150);
  double worst = 0.0;
  for (std::size_t i = 0; i < a.updates.size(); ++i) {
    const double la = a.updates[i].minibatch_loss;
    worst = std::max(worst, std::abs(b.updates[i].minibatch_loss - la) / la);
  }
  INFO("largest relative loss difference over 150 iterations " << worst);
  CHECK(worst <= 1e-4);
  CHECK(a.updates.back().minibatch_loss < 0.5 * a.updates.front().minibatch_loss);
}

TEST_CASE(
    "torchscript: the thread, server-thread, hogwild and virtual engines train a scripted cnn",
    "[model][torchscript]") {
  leak_check_before_libtorch();
  const auto file = exported_model("cnn-mnist", "cnn");
  for (const std::string engine : {"inline", "thread", "hogwild", "virtual"}) {
    INFO(engine);
    // Hogwild! runs async only: each gradient is applied alone, in place.
    auto o = engine == "hogwild" ? quick_options("async", 4, 1, "exp:mean=2ms")
                                 : quick_options("k-async", 4, 2, "exp:mean=2ms");
    o.model.name = "torchscript:" + file.string();
    o.iterations = 60;
    o.lr = 0.05;
    if (engine == "thread") o.server = ServerPlacement::kThread;
    if (engine == "hogwild") o.server = ServerPlacement::kHogwild;
    if (engine == "virtual") o.clock = ClockKind::kVirtual;
    const auto run = run_ok(o);
    REQUIRE(run.stop_reason == StopReason::kIterations);
    REQUIRE(run.updates.size() == 60);
    for (std::size_t i = 0; i < run.updates.size(); ++i) {
      CHECK(run.updates[i].iteration == i + 1);
      CHECK(run.updates[i].n_grads == o.rule.k);
    }
    REQUIRE(run.evals.size() >= 2);
    CHECK(run.evals.back().test_loss < run.evals.front().test_loss);
  }
}

#endif
