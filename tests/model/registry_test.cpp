// register_model: a model of one's own is made by name like a built-in one, in make_model and in
// train(), and bad registrations are refused in one line.
#include <catch2/catch.hpp>

#include "engine/engine_test_util.hpp"
#include "stalesgd/model/model.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

namespace {

// The built-in softmax under another name, counting the runs that built it.
std::atomic<int> g_built{0};
Result<std::unique_ptr<Model>> counted_softmax(const ImageShape& input, int classes, float l2) {
  ++g_built;
  return make_model({"softmax", {}, l2}, input, classes);
}

}  // namespace

TEST_CASE("model registry: a registered model trains through train() by its name",
          "[model][registry]") {
  static const Status once = register_model("test-registered-softmax", counted_softmax);
  REQUIRE(once.ok());
  CHECK(is_model_name("test-registered-softmax"));
  const auto names = registered_model_names();
  CHECK(std::find(names.begin(), names.end(), "test-registered-softmax") != names.end());
  CHECK_THAT(unknown_model_message("resnet"), Contains("test-registered-softmax"));

  auto o = quick_options("k-async", 4, 2, "exp:mean=1ms");
  o.clock = ClockKind::kVirtual;
  o.iterations = 100;
  const int before = g_built.load();
  const auto builtin = run_ok(o);
  o.model.name = "test-registered-softmax";
  const auto mine = run_ok(o);
  CHECK(g_built.load() == before + 1);
  // The same model, seed and clock: the same run.
  REQUIRE(mine.updates.size() == builtin.updates.size());
  for (std::size_t i = 0; i < mine.updates.size(); ++i) {
    CHECK(mine.updates[i].minibatch_loss == builtin.updates[i].minibatch_loss);
  }
  CHECK(mine.evals.back().test_error == builtin.evals.back().test_error);
}

TEST_CASE("model registry: bad names, built-in names and repeats are refused",
          "[model][registry]") {
  const ModelFactory f = counted_softmax;
  for (const std::string bad : {"", "has space", "torchscript:x", "a:b"}) {
    const auto s = register_model(bad, f);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.error().message, Contains("is not a model name"));
  }
  auto s = register_model("mlp", f);
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.error().message, Contains("is a built-in model"));
  s = register_model("test-no-factory", ModelFactory{});
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.error().message, Contains("has no factory"));
  static const Status first = register_model("test-twice", f);
  REQUIRE(first.ok());
  s = register_model("test-twice", f);
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.error().message, Contains("registered already"));
  // A factory that returns an error: make_model passes it on.
  static const Status failing = register_model(
      "test-failing", [](const ImageShape&, int, float) -> Result<std::unique_ptr<Model>> {
        return Error{"this model needs 3x32x32 images"};
      });
  REQUIRE(failing.ok());
  const auto m = make_model({"test-failing", {}, 0.0f}, {1, 28, 28}, 10);
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().message == "this model needs 3x32x32 images");
}
