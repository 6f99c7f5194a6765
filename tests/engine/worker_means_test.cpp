// WorkerMeans (engine/worker_means.hpp): Malenia's update, the mean over workers of each
// worker's mean, against the arithmetic; and its checkpoint round trip.
#include "engine/worker_means.hpp"

#include <catch2/catch.hpp>
#include <vector>

using namespace stalesgd;

TEST_CASE("worker means: the mean of the workers' means, not of all gradients", "[engine]") {
  WorkerMeans m(3, 2);
  const std::vector<float> w{100.0f, 0.0f};
  std::vector<float> out(2);
  m.add(0, std::vector<float>{1.0f, 2.0f}, 1.0f);
  m.add(0, std::vector<float>{3.0f, 4.0f}, 1.0f);  // worker 0's mean: (2, 3)
  m.add(2, std::vector<float>{5.0f, 0.5f}, 2.0f);  // worker 2's: lr 2 g = (10, 1)
  CHECK(m.count(0) == 2);
  CHECK(m.count(1) == 0);
  m.apply(w, out);  // w - ((2, 3) + (10, 1)) / 2: worker 1 gave nothing and counts for nothing
  CHECK(out[0] == Approx(94.0f));
  CHECK(out[1] == Approx(-2.0f));
  CHECK(m.count(0) == 0);  // a new round
  m.add(1, std::vector<float>{1.0f, 1.0f}, 1.0f);
  m.apply(w, out);
  CHECK(out[0] == Approx(99.0f));
}

TEST_CASE("worker means: a checkpoint keeps the round", "[engine]") {
  WorkerMeans a(2, 2);
  a.add(1, std::vector<float>{4.0f, 8.0f}, 0.5f);
  a.add(1, std::vector<float>{0.0f, 0.0f}, 0.5f);
  StateWriter out;
  a.save(out);
  WorkerMeans b(2, 2);
  StateReader in(out.bytes());
  b.load(in);
  REQUIRE(in.ok());
  CHECK(b.count(1) == 2);
  std::vector<float> x(2), y(2);
  const std::vector<float> w{0.0f, 0.0f};
  a.apply(w, x);
  b.apply(w, y);
  CHECK(x == y);
  CHECK(x[0] == Approx(-1.0f));
}

TEST_CASE("worker means: a model's state is averaged with weight 1, not the learning rate",
          "[engine]") {
  WorkerMeans m(2, 2, 1);  // the second entry is state (Model::num_state)
  const std::vector<float> w{100.0f, 5.0f};
  std::vector<float> out(2);
  m.add(0, std::vector<float>{1.0f, 2.0f}, 4.0f);
  m.add(1, std::vector<float>{3.0f, -4.0f}, 2.0f);
  m.apply(w, out);  // head: 100 - (4 + 6) / 2; tail: 5 - (2 - 4) / 2
  CHECK(out[0] == Approx(95.0f));
  CHECK(out[1] == Approx(6.0f));
}
