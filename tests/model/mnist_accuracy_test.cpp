// Accuracy on real data: softmax and mlp trained with plain minibatch SGD (w -= lr * g) for one
// pass over the first 10,000 MNIST training images must classify the 10,000 test images well.
// A wrong gradient or a broken kernel shows up here even when each piece passes its unit test.
#include <catch2/catch.hpp>

#include "model/model_check.hpp"
#include "stalesgd/data/catalog.hpp"
#include "stalesgd/util/seed.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

namespace {

const Dataset& mnist() {
  static const Result<Dataset> data = load_dataset("mnist", repo_data_dir());
  if (!data.ok()) FAIL(data.error().message);
  return data.value();
}

// One pass of sequential SGD over the first `samples` training images; returns the test error.
double train_one_pass(const ModelSpec& s, float lr, int batch, std::size_t samples) {
  const Dataset& data = mnist();
  auto model = std::move(make_model(s, data.train.shape, data.num_classes)).value();
  std::vector<float> w(model->num_params()), g(model->num_params());
  model->init_params(w, derive_seed(1, SeedStream::kModelInit));
  auto ws = model->make_workspace(batch);
  int bad_steps = 0;
  for (std::size_t first = 0; first + batch <= samples; first += batch) {
    const Batch b{data.train.sample(first), data.train.labels.data() + first, batch};
    const auto loss = model->loss_and_gradient(w, b, g, *ws);
    bad_steps += loss.has_value() && std::isfinite(*loss) ? 0 : 1;
    for (std::size_t i = 0; i < w.size(); ++i) w[i] -= lr * g[i];
  }
  CHECK(bad_steps == 0);
  auto eval_ws = model->make_workspace(500);
  return model->evaluate(w, data.test, *eval_ws).error;
}

}  // namespace

TEST_CASE("softmax reaches 88% on MNIST after one pass over 10,000 images", "[model][mnist]") {
  const double error = train_one_pass(spec("softmax"), 0.5f, 32, 10000);
  INFO("test accuracy " << 100.0 * (1.0 - error) << "%");
  CHECK(error <= 0.12);
}

TEST_CASE("mlp reaches 90% on MNIST after one pass over 10,000 images", "[model][mnist]") {
  const double error = train_one_pass(spec("mlp"), 0.3f, 32, 10000);
  INFO("test accuracy " << 100.0 * (1.0 - error) << "%");
  CHECK(error <= 0.10);
}
