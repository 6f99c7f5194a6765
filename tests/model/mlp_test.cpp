// mlp: sizes for the default and --hidden layouts, and finite-difference gradients through the
// ReLU layers on sparse (first layer's sparse path) and dense inputs.
#include <catch2/catch.hpp>

#include "model/layers/layer_check.hpp"
#include "model/model_check.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

TEST_CASE("mlp sizes: default 784-128-10 and --hidden 256,128", "[model][mlp]") {
  const ImageShape mnist{1, 28, 28};
  auto def = make_model(spec("mlp"), mnist, 10);
  REQUIRE(def.ok());
  CHECK((*def)->describe() == "mlp(784-128-10)");
  CHECK((*def)->num_params() == 784 * 128 + 128 + 128 * 10 + 10);  // 101,770
  auto two = make_model(spec("mlp", {256, 128}), mnist, 10);
  REQUIRE(two.ok());
  CHECK((*two)->describe() == "mlp(784-256-128-10)");
  CHECK((*two)->num_params() == 235146);
}

TEST_CASE("mlp gradient matches finite differences", "[model][mlp]") {
  const ImageShape shape{1, 6, 6};
  auto m = make_model(spec("mlp", {12, 9}), shape, 5);
  REQUIRE(m.ok());
  for (double zeros : {0.8, 0.0}) {
    INFO("fraction of zero pixels " << zeros);
    const auto c = check_model_gradient(**m, random_batch(shape, 7, 5, zeros, 3), {.coords = 150});
    require_passes(c, "mlp");
  }
}
