// Softmax cross-entropy: closed forms, large logits, the error count and finite differences.
#include "model/layers/cross_entropy.hpp"

#include <cmath>

#include <catch2/catch.hpp>

#include "model/layers/layer_check.hpp"

using namespace stalesgd;
using namespace stalesgd::model;
using namespace stalesgd::test;

TEST_CASE("Cross-entropy of equal logits is log(classes)", "[model][cross_entropy]") {
  CrossEntropyScratch s;
  s.reserve(2);
  const std::vector<float> z(20, 3.0f);
  const std::vector<std::uint8_t> y{4, 9};
  std::vector<float> dz(20);
  const auto r = softmax_cross_entropy(z.data(), y.data(), 10, 2, dz.data(), s);
  CHECK(r.loss == Approx(2 * std::log(10.0)));
  // softmax = 0.1 everywhere, minus 1 at the label, over n = 2
  CHECK(dz[0] == Approx(0.05f));
  CHECK(dz[4] == Approx(-0.45f));
  CHECK(dz[19] == Approx(-0.45f));
}

TEST_CASE("Cross-entropy is stable for large logits and counts errors", "[model][cross_entropy]") {
  CrossEntropyScratch s;
  s.reserve(3);
  // sample 0: label 0 wins by 1000; sample 1: label 1 loses by 1000; sample 2: tie -> first wins
  const std::vector<float> z{1000, 0, 1000, 0, 5, 5};
  const std::vector<std::uint8_t> y{0, 1, 1};
  std::vector<float> dz(6);
  const auto r = softmax_cross_entropy(z.data(), y.data(), 2, 3, dz.data(), s);
  CHECK(std::isfinite(r.loss));
  CHECK(r.loss == Approx(0.0 + 1000.0 + std::log(2.0)));
  CHECK(r.errors == 2);  // sample 1, and sample 2 whose tie goes to class 0
  for (float v : dz) CHECK(std::isfinite(v));
}

TEST_CASE("Cross-entropy gradient matches finite differences", "[model][cross_entropy]") {
  const int classes = 7;
  const int n = 5;
  CrossEntropyScratch s;
  s.reserve(n);
  auto z = random_floats(classes * n, -3.0f, 3.0f, 8);
  const std::vector<std::uint8_t> y{0, 6, 3, 3, 1};
  std::vector<float> dz(z.size());
  softmax_cross_entropy(z.data(), y.data(), classes, n, dz.data(), s);
  auto mean_loss = [&] {
    return softmax_cross_entropy(z.data(), y.data(), classes, n, nullptr, s).loss / n;
  };
  const auto c = check_gradient(std::span<float>(z), std::span<const float>(dz), mean_loss,
                                {.coords = classes * n, .h = 1e-3f, .rtol = 1e-2, .smooth = true});
  require_passes(c, "dZ");
}
