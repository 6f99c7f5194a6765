// cifar-cnn: size and finite-difference gradients of the whole network (CHW input).
#include <catch2/catch.hpp>

#include "model/layers/layer_check.hpp"
#include "model/model_check.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

TEST_CASE("cifar-cnn has 89,834 parameters", "[model][cifar_cnn]") {
  auto m = make_model(spec("cifar-cnn"), ImageShape{3, 32, 32}, 10);
  REQUIRE(m.ok());
  CHECK((*m)->num_params() == 448 + 4640 + 18496 + 65600 + 650);
}

TEST_CASE("cifar-cnn gradient matches finite differences", "[model][cifar_cnn]") {
  auto m = make_model(spec("cifar-cnn"), ImageShape{3, 32, 32}, 10);
  REQUIRE(m.ok());
  const auto c = check_model_gradient(**m, random_batch({3, 32, 32}, 2, 10, 0.0, 5),
                                      {.coords = 100, .h = 3e-3f});
  require_passes(c, "cifar-cnn");
}
