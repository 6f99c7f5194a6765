// softmax (multinomial logistic regression): size, finite-difference gradients on sparse and
// dense inputs, and the L2 term lambda/2 ||W||^2 (weights only, not biases).
#include <catch2/catch.hpp>

#include "model/layers/layer_check.hpp"
#include "model/model_check.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

namespace {
std::unique_ptr<Model> softmax(float l2 = 0.0f, ImageShape shape = {1, 28, 28}) {
  return std::move(make_model(spec("softmax", {}, l2), shape, 10)).value();
}
}  // namespace

TEST_CASE("softmax has 7,850 parameters on MNIST", "[model][softmax]") {
  const auto m = softmax();
  CHECK(m->describe() == "softmax(784-10)");
  CHECK(m->num_params() == 784 * 10 + 10);
  CHECK(m->gradient_flops(32) == 2.0 * 2 * 784 * 10 * 32);
}

TEST_CASE("softmax gradient matches finite differences", "[model][softmax]") {
  const auto m = softmax(0.0f, {1, 8, 8});
  for (double zeros : {0.8, 0.0}) {  // sparse path, dense path
    INFO("fraction of zero pixels " << zeros);
    const auto c = check_model_gradient(*m, random_batch({1, 8, 8}, 6, 10, zeros, 1),
                                        {.coords = 120, .smooth = true});
    require_passes(c, "softmax");
  }
}

TEST_CASE("softmax L2 term adds lambda/2 ||W||^2 and lambda W, not on biases", "[model][softmax]") {
  const float lambda = 0.3f;
  const auto plain = softmax(0.0f, {1, 4, 4});
  const auto reg = softmax(lambda, {1, 4, 4});
  const auto data = random_batch({1, 4, 4}, 5, 10, 0.5, 2);
  std::vector<float> w(plain->num_params());
  plain->init_params(w, 3);
  for (std::size_t i = 160; i < w.size(); ++i) w[i] = 0.5f;  // nonzero biases: must not count
  auto ws0 = plain->make_workspace(5);
  auto ws1 = reg->make_workspace(5);
  std::vector<float> g0(w.size()), g1(w.size());
  const float l0 = *plain->loss_and_gradient(w, data.batch(), g0, *ws0);
  const float l1 = *reg->loss_and_gradient(w, data.batch(), g1, *ws1);
  double norm = 0.0;
  for (std::size_t i = 0; i < 160; ++i) norm += static_cast<double>(w[i]) * w[i];
  CHECK(l1 == Approx(l0 + 0.5 * lambda * norm).epsilon(1e-5));
  for (std::size_t i = 0; i < 160; ++i)
    REQUIRE(g1[i] == Approx(g0[i] + lambda * w[i]).margin(1e-6));
  for (std::size_t i = 160; i < w.size(); ++i) REQUIRE(g1[i] == g0[i]);
  const auto c = check_model_gradient(*reg, data, {.coords = 170, .smooth = true});
  require_passes(c, "softmax with L2");
}
