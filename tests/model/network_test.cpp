// Network (every model is one): deterministic initialisation, cancellation, evaluate's
// chunking, concurrent use from several threads, and misuse reported as exceptions.
#include "model/network.hpp"

#include <thread>

#include <catch2/catch.hpp>

#include "model/model_check.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

namespace {

struct Case {
  const char* name;
  ImageShape shape;
};
const Case kModels[] = {{"softmax", {1, 28, 28}},
                        {"mlp", {1, 28, 28}},
                        {"lenet", {1, 28, 28}},
                        {"cifar-cnn", {3, 32, 32}}};

std::unique_ptr<Model> build(const Case& c) {
  return std::move(make_model(spec(c.name), c.shape, 10)).value();
}

Split split_of(const RandomBatch& b, const ImageShape& shape) {
  Split s;
  s.shape = shape;
  s.count = b.labels.size();
  s.features = b.features;
  s.labels = b.labels;
  return s;
}

}  // namespace

TEST_CASE("init_params is deterministic in the seed, biases start at zero", "[model][network]") {
  for (const auto& c : kModels) {
    INFO(c.name);
    const auto m = build(c);
    std::vector<float> a(m->num_params()), b(m->num_params()), d(m->num_params());
    m->init_params(a, 42);
    m->init_params(b, 42);
    m->init_params(d, 43);
    CHECK(a == b);
    CHECK(a != d);
    const auto& net = dynamic_cast<const model::Network&>(*m);
    for (std::size_t i = 0; i < net.layers().size(); ++i) {
      const auto& layer = *net.layers()[i];
      const float* w = a.data() + net.param_offset(i);
      for (std::size_t j = layer.num_weights(); j < layer.num_params(); ++j) REQUIRE(w[j] == 0.0f);
      // weights are uniform with a He/Glorot limit <= sqrt(6): none zero, none out of range
      for (std::size_t j = 0; j < layer.num_weights(); j += 97) {
        REQUIRE(std::fabs(w[j]) < 2.5f);
      }
    }
  }
}

TEST_CASE("A set cancel flag stops loss_and_gradient", "[model][network]") {
  for (const auto& c : kModels) {
    INFO(c.name);
    const auto m = build(c);
    const auto data = random_batch(c.shape, 4, 10, 0.5, 1);
    std::vector<float> w(m->num_params()), g(m->num_params());
    m->init_params(w, 1);
    auto ws = m->make_workspace(4);
    std::atomic<bool> cancel{true};
    CHECK_FALSE(m->loss_and_gradient(w, data.batch(), g, *ws, &cancel).has_value());
    cancel = false;
    CHECK(m->loss_and_gradient(w, data.batch(), g, *ws, &cancel).has_value());
  }
}

TEST_CASE("evaluate is independent of the chunk size and honours max_samples", "[model][network]") {
  for (const auto& c : kModels) {
    INFO(c.name);
    const auto m = build(c);
    const auto data = random_batch(c.shape, 23, 10, 0.6, 2);
    const Split split = split_of(data, c.shape);
    std::vector<float> w(m->num_params()), g(m->num_params());
    m->init_params(w, 5);
    auto small = m->make_workspace(5);
    auto whole = m->make_workspace(23);
    const EvalResult a = m->evaluate(w, split, *small);
    const EvalResult b = m->evaluate(w, split, *whole);
    CHECK(a.loss == Approx(b.loss).epsilon(1e-5));
    CHECK(a.error == b.error);
    // the mean loss of evaluate is the loss of one batch over the same samples
    const float batch_loss = *m->loss_and_gradient(w, data.batch(), g, *whole);
    CHECK(b.loss == Approx(batch_loss).epsilon(1e-5));
    CHECK(b.error >= 0.0);
    CHECK(b.error <= 1.0);
    // max_samples: the first 6 only
    const EvalResult first6 = m->evaluate(w, split, *small, 6);
    RandomBatch head = data;
    head.features.resize(6 * c.shape.dim());
    head.labels.resize(6);
    CHECK(first6.loss == Approx(*m->loss_and_gradient(w, head.batch(), g, *whole)).epsilon(1e-5));
  }
}

TEST_CASE("Concurrent gradients with one workspace per thread match sequential ones",
          "[model][network]") {
  for (const auto& c : kModels) {
    INFO(c.name);
    const auto m = build(c);
    std::vector<float> w(m->num_params());
    m->init_params(w, 9);
    constexpr int kThreads = 4;
    std::vector<RandomBatch> data;
    std::vector<std::vector<float>> expect(kThreads), got(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      data.push_back(random_batch(c.shape, 8, 10, 0.7, 10 + t));
      expect[t].resize(w.size());
      got[t].resize(w.size());
      auto ws = m->make_workspace(8);
      m->loss_and_gradient(w, data[t].batch(), expect[t], *ws);
    }
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        auto ws = m->make_workspace(8);
        for (int rep = 0; rep < 3; ++rep) m->loss_and_gradient(w, data[t].batch(), got[t], *ws);
      });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) CHECK(got[t] == expect[t]);  // bit for bit
  }
}

TEST_CASE("Misuse is a bug and throws", "[model][network]") {
  const auto m = build(kModels[1]);
  const auto data = random_batch({1, 28, 28}, 9, 10, 0.8, 3);
  std::vector<float> w(m->num_params()), g(m->num_params());
  auto ws = m->make_workspace(8);
  CHECK_THROWS_AS(m->loss_and_gradient(w, data.batch(), g, *ws), std::invalid_argument);
  std::vector<float> short_grad(3);
  CHECK_THROWS_AS(m->loss_and_gradient(w, data.batch(), short_grad, *ws), std::invalid_argument);
  const auto other = build(kModels[0]);
  auto other_ws = other->make_workspace(16);
  CHECK_THROWS_AS(m->loss_and_gradient(w, data.batch(), g, *other_ws), std::invalid_argument);
}
