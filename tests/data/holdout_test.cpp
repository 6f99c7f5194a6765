// with_holdout: the last N training samples become the val split, the rest stay the train
// split in order, the test split and the identity are untouched, and a holdout that leaves no
// training sample is one line naming the sizes.
#include "stalesgd/data/holdout.hpp"

#include <catch2/catch.hpp>

using namespace stalesgd;

namespace {

// Six 1x1x2 samples, sample i holding (i, -i) with label i.
Dataset six() {
  Dataset d;
  d.name = "six";
  d.num_classes = 6;
  d.digest = "0123456789abcdef";
  d.train.shape = d.test.shape = {1, 1, 2};
  d.train.count = 6;
  for (int i = 0; i < 6; ++i) {
    d.train.features.insert(d.train.features.end(), {float(i), float(-i)});
    d.train.labels.push_back(static_cast<std::uint8_t>(i));
  }
  d.test.count = 1;
  d.test.features = {7.0f, 7.0f};
  d.test.labels = {3};
  return d;
}

}  // namespace

TEST_CASE("holdout: the last N training samples are the val split, the rest the train split",
          "[data][holdout]") {
  const Dataset d = six();
  const auto held = with_holdout(d, 2);
  REQUIRE(held);
  CHECK(held->train.count == 4);
  CHECK(held->train.features == std::vector<float>{0, 0, 1, -1, 2, -2, 3, -3});
  CHECK(held->train.labels == std::vector<std::uint8_t>{0, 1, 2, 3});
  CHECK(held->val.count == 2);
  CHECK(held->val.shape == d.train.shape);
  CHECK(held->val.features == std::vector<float>{4, -4, 5, -5});
  CHECK(held->val.labels == std::vector<std::uint8_t>{4, 5});
  CHECK(held->test.features == d.test.features);
  CHECK(held->digest == d.digest);
  CHECK(held->num_classes == 6);

  const auto none = with_holdout(d, 0);
  REQUIRE(none);
  CHECK(none->train.count == 6);
  CHECK(none->val.count == 0);
}

TEST_CASE("holdout: N at or past the training samples is an error naming the sizes",
          "[data][holdout]") {
  for (std::size_t n : {6u, 100u}) {
    const auto held = with_holdout(six(), n);
    REQUIRE_FALSE(held);
    CHECK(held.error().message ==
          "--holdout " + std::to_string(n) + " leaves no training sample: six has 6");
  }
}
