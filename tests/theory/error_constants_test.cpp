// Estimating the error bounds' constants: L of a quadratic with known eigenvalues, sigma^2
// scaling as 1/batch, c = l2 for the softmax, F* on evals.csv's terms, and refusing l2 = 0.
#include <numeric>
#include <random>

#include <catch2/catch.hpp>

#include "stalesgd/theory/error_constants.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd;

namespace {

// F(w) = mean over samples s of 1/2 sum_i lambda_i w_i^2 + <a_s, w>: Hessian diag(lambda) and
// one sample's gradient variance mean |a_s - mean a|^2. A sample's features are a_s.
class QuadraticModel final : public Model {
 public:
  explicit QuadraticModel(std::vector<double> lambda) : lambda_(std::move(lambda)) {}
  std::string describe() const override { return "quadratic"; }
  std::size_t num_params() const override { return lambda_.size(); }
  void init_params(std::span<float> w, std::uint64_t) const override {
    std::fill(w.begin(), w.end(), 1.0f);
  }
  std::unique_ptr<Workspace> make_workspace(int) const override {
    return std::make_unique<Workspace>();
  }
  std::optional<float> loss_and_gradient(std::span<const float> w, const Batch& batch,
                                         std::span<float> grad, Workspace&,
                                         const std::atomic<bool>*) const override {
    double loss = 0.0;
    const std::size_t d = lambda_.size();
    for (std::size_t i = 0; i < d; ++i) {
      double a = 0.0;
      for (int s = 0; s < batch.size; ++s) a += batch.features[s * d + i];
      a /= batch.size;
      grad[i] = static_cast<float>(lambda_[i] * w[i] + a);
      loss += 0.5 * lambda_[i] * w[i] * w[i] + a * w[i];
    }
    return static_cast<float>(loss);
  }
  double l2_penalty(std::span<const float>) const override { return 0.0; }
  EvalSums evaluate_sums(std::span<const float>, const Split&, std::size_t, std::size_t,
                         Workspace&) const override {
    return {};
  }

 private:
  std::vector<double> lambda_;
};

Split random_split(std::size_t count, std::size_t dim) {
  Split s;
  s.shape = ImageShape{1, 1, static_cast<int>(dim)};
  s.count = count;
  s.features.resize(count * dim);
  s.labels.assign(count, 0);
  std::mt19937_64 rng(7);
  std::normal_distribution<float> normal;
  for (auto& x : s.features) x = normal(rng);
  return s;
}

}  // namespace

TEST_CASE("power iteration finds the largest eigenvalue of a quadratic", "[error][theory]") {
  const QuadraticModel model({1.0, 2.0, 5.0, 10.0, 0.5});
  const Split data = random_split(64, 5);
  const std::vector<float> w(5, 0.3f);
  CHECK(power_iteration_smoothness(model, data, 64, w, 40, 1) == Approx(10.0).epsilon(1e-3));
}

TEST_CASE("the minibatch gradient variance scales as 1/batch", "[error][theory]") {
  const QuadraticModel model({1.0, 1.0, 1.0});
  const std::size_t n = 2000;
  const Split data = random_split(n, 3);
  // One sample's variance: mean |a_s - mean a|^2.
  std::vector<double> mean(3, 0.0);
  for (std::size_t s = 0; s < n; ++s)
    for (int i = 0; i < 3; ++i) mean[i] += data.features[s * 3 + i] / n;
  double exact = 0.0;
  for (std::size_t s = 0; s < n; ++s)
    for (int i = 0; i < 3; ++i) exact += std::pow(data.features[s * 3 + i] - mean[i], 2) / n;
  const std::vector<float> w(3, 0.0f);
  const double one = minibatch_gradient_variance(model, data, n, w, 1, 4000, 2);
  const double eight = minibatch_gradient_variance(model, data, n, w, 8, 4000, 3);
  CHECK(one == Approx(exact).epsilon(0.1));
  CHECK(eight * 8 == Approx(exact).epsilon(0.1));
}

TEST_CASE("softmax constants: c is l2, L above it, F* below F(w0), and l2 = 0 is refused",
          "[error][theory]") {
  const Dataset& data = test::mnist();
  ModelSpec spec;
  spec.l2 = 1e-3f;
  auto model = make_model(spec, data.train.shape, data.num_classes);
  REQUIRE(model);
  ConstantsOptions o;
  o.samples = 1000;
  o.curvature_samples = 500;
  o.power_iterations = 5;
  o.variance_draws = 32;
  o.optimum_epochs = 4;
  auto e = estimate_error_constants(**model, 1e-3, data.train, o);
  REQUIRE(e);
  CHECK(e->k.c == 1e-3);
  CHECK(e->k.L > e->k.c);
  CHECK(e->f_star < e->f0);
  CHECK(e->k.initial_gap == Approx(e->f0 - e->f_star));
  CHECK(e->k.sigma2 == Approx(e->sigma2_batch * o.variance_batch));
  CHECK(e->l2_term_star > 0.0);
  // evals.csv's train_objective at w*: its CE over the first eval_samples plus l2/2 |W*|^2
  // (softmax: W is the first 784 x 10 parameters, then the biases, which are not penalised).
  double squares = 0.0;
  for (std::size_t i = 0; i < 784 * 10; ++i) squares += double{e->w_star[i]} * e->w_star[i];
  CHECK(e->train_objective_star - e->train_loss_star == Approx(0.5 * 1e-3 * squares).epsilon(1e-5));
  auto refused = estimate_error_constants(**model, 0.0, data.train, o);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("not strongly convex") != std::string::npos);
}
