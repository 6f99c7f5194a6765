// lenet: LeNet-5 size (61,706 parameters) and finite-difference gradients of the whole network.
#include <catch2/catch.hpp>

#include "model/layers/layer_check.hpp"
#include "model/model_check.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

TEST_CASE("lenet is LeNet-5 with 61,706 parameters", "[model][lenet]") {
  auto m = make_model(spec("lenet"), ImageShape{1, 28, 28}, 10);
  REQUIRE(m.ok());
  CHECK((*m)->num_params() == 156 + 2416 + 48120 + 10164 + 850);
  CHECK((*m)->describe() == "lenet(conv5x5x6-pool-conv5x5x16-pool-fc120-fc84-fc10)");
}

TEST_CASE("lenet gradient matches finite differences", "[model][lenet]") {
  auto m = make_model(spec("lenet"), ImageShape{1, 28, 28}, 10);
  REQUIRE(m.ok());
  const auto c = check_model_gradient(**m, random_batch({1, 28, 28}, 3, 10, 0.5, 4),
                                      {.coords = 100, .h = 3e-3f});
  require_passes(c, "lenet");
}
