// Estimates c, L, sigma^2, w*, F* and F(w_0) for the error bounds; error_constants.hpp.
#include "stalesgd/theory/error_constants.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include <fmt/format.h>

#include "stalesgd/util/seed.hpp"
#include "util/parallel.hpp"

namespace stalesgd {
namespace {

constexpr std::size_t kBlock = 500;  // samples per gradient task

// Mean loss and gradient over samples [first, first + count), in blocks of kBlock run as tasks
// and summed in block order (the same result at any thread count).
double range_loss_and_gradient(const Model& model, const Split& data, std::size_t first,
                               std::size_t count, std::span<const float> w,
                               std::vector<double>& grad) {
  const std::size_t p = model.num_params();
  const std::size_t blocks = (count + kBlock - 1) / kBlock;
  std::vector<std::vector<float>> g(blocks, std::vector<float>(p));
  std::vector<double> loss(blocks);
  parallel_for_index(blocks, [&](std::size_t b) {
    const std::size_t start = first + b * kBlock;
    const int size = static_cast<int>(std::min(kBlock, first + count - start));
    auto ws = model.make_workspace(size);
    const Batch batch{data.sample(start), data.labels.data() + start, size};
    loss[b] = static_cast<double>(*model.loss_and_gradient(w, batch, g[b], *ws)) * size;
  });
  grad.assign(p, 0.0);
  double total = 0.0;
  for (std::size_t b = 0; b < blocks; ++b) {
    const double weight =
        static_cast<double>(std::min(kBlock, count - b * kBlock)) / static_cast<double>(count);
    for (std::size_t i = 0; i < p; ++i) grad[i] += weight * g[b][i];
    total += loss[b];
  }
  return total / static_cast<double>(count);
}

double norm(const std::vector<double>& v) {
  return std::sqrt(std::inner_product(v.begin(), v.end(), v.begin(), 0.0));
}

// w* by minibatch SGD with heavy-ball momentum 0.9 on contiguous blocks of 2,000 samples in a
// shuffled order, lr 1/L for the first half of the epochs, then halved every epoch (the
// stochastic floor shrinks with the lr). Its accuracy is reported as |grad F(w*)|.
std::vector<float> minimise(const Model& model, const Split& data, std::size_t n,
                            std::vector<float> w, double L, int epochs, std::uint64_t seed) {
  const std::size_t chunk = std::min<std::size_t>(2000, n);
  const std::size_t chunks = n / chunk;
  std::vector<std::size_t> order(chunks);
  std::iota(order.begin(), order.end(), 0);
  Rng rng(seed);
  std::vector<double> velocity(w.size(), 0.0), grad;
  for (int e = 0; e < epochs; ++e) {
    const double lr = (1.0 / L) * std::pow(0.5, std::max(0, e - epochs / 2));
    std::shuffle(order.begin(), order.end(), rng);
    for (std::size_t c : order) {
      range_loss_and_gradient(model, data, c * chunk, chunk, w, grad);
      for (std::size_t i = 0; i < w.size(); ++i) {
        velocity[i] = 0.9 * velocity[i] - lr * grad[i];
        w[i] = static_cast<float>(w[i] + velocity[i]);
      }
    }
  }
  return w;
}

}  // namespace

double full_loss_and_gradient(const Model& model, const Split& data, std::size_t n,
                              std::span<const float> w, std::vector<double>& grad) {
  return range_loss_and_gradient(model, data, 0, n, w, grad);
}

double power_iteration_smoothness(const Model& model, const Split& data, std::size_t n,
                                  std::span<const float> w, int iterations, std::uint64_t seed) {
  // H v ~ (grad F(w + eps v) - grad F(w)) / eps for a unit v: the gradient is smooth, and eps is
  // far above float rounding of w yet far below the scale on which the Hessian changes.
  constexpr double kEps = 1e-3;
  const std::size_t p = model.num_params();
  std::vector<double> g0, g1, v(p);
  full_loss_and_gradient(model, data, n, w, g0);
  Rng rng(seed);
  std::normal_distribution<double> normal;
  for (auto& x : v) x = normal(rng);
  double lambda = 0.0;
  std::vector<float> shifted(p);
  for (int it = 0; it < iterations; ++it) {
    const double nv = norm(v);
    for (std::size_t i = 0; i < p; ++i) v[i] /= nv;
    for (std::size_t i = 0; i < p; ++i) shifted[i] = static_cast<float>(w[i] + kEps * v[i]);
    full_loss_and_gradient(model, data, n, shifted, g1);
    double rayleigh = 0.0;
    for (std::size_t i = 0; i < p; ++i) {
      g1[i] = (g1[i] - g0[i]) / kEps;  // H v
      rayleigh += v[i] * g1[i];
    }
    lambda = rayleigh;
    v.swap(g1);
  }
  return lambda;
}

double minibatch_gradient_variance(const Model& model, const Split& data, std::size_t n,
                                   std::span<const float> w, int batch, int draws,
                                   std::uint64_t seed) {
  const std::size_t p = model.num_params();
  const std::size_t dim = data.dim();
  std::vector<double> full;
  full_loss_and_gradient(model, data, n, w, full);
  // The draws' indices come from one stream, in order, before any task runs.
  std::vector<std::vector<std::size_t>> picks(draws, std::vector<std::size_t>(batch));
  Rng rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, n - 1);
  for (auto& d : picks)
    for (auto& i : d) i = pick(rng);
  std::vector<double> dev(draws);
  parallel_for_index(static_cast<std::size_t>(draws), [&](std::size_t d) {
    std::vector<float> x(batch * dim), g(p);
    std::vector<std::uint8_t> y(batch);
    for (int s = 0; s < batch; ++s) {
      std::copy_n(data.sample(picks[d][s]), dim, x.begin() + s * dim);
      y[s] = data.labels[picks[d][s]];
    }
    auto ws = model.make_workspace(batch);
    model.loss_and_gradient(w, Batch{x.data(), y.data(), batch}, g, *ws);
    double sq = 0.0;
    for (std::size_t i = 0; i < p; ++i) sq += (g[i] - full[i]) * (g[i] - full[i]);
    dev[d] = sq;
  });
  return std::accumulate(dev.begin(), dev.end(), 0.0) / draws;
}

Result<EstimatedConstants> estimate_error_constants(const Model& model, double l2,
                                                    const Split& train, const ConstantsOptions& o) {
  if (!(l2 > 0.0)) {
    return Error{fmt::format(
        "--l2 {} makes the loss not strongly convex, so the error bounds (c = l2 > 0) do not "
        "apply; give e.g. --l2 1e-3",
        l2)};
  }
  const std::size_t n = o.samples == 0 ? train.count : std::min(o.samples, train.count);
  if (n == 0) return Error{"no training samples to estimate the constants on"};
  const std::size_t nc = o.curvature_samples == 0 ? n : std::min(o.curvature_samples, n);
  EstimatedConstants e;
  e.k.c = l2;
  std::vector<float> w0(model.num_params());
  model.init_params(w0, derive_seed(o.seed, SeedStream::kModelInit));
  std::vector<double> grad;
  e.f0 = full_loss_and_gradient(model, train, n, w0, grad);
  e.L_w0 = power_iteration_smoothness(model, train, nc, w0, o.power_iterations,
                                      derive_seed(o.seed, SeedStream::kTheory, 1));
  e.w_star = minimise(model, train, n, w0, std::max(e.L_w0, l2), o.optimum_epochs,
                      derive_seed(o.seed, SeedStream::kTheory, 2));
  e.f_star = full_loss_and_gradient(model, train, n, e.w_star, grad);
  e.grad_norm_star = norm(grad);
  if (!std::isfinite(e.f_star)) return Error{"the minimisation for w* diverged (NaN loss)"};
  e.L_star = power_iteration_smoothness(model, train, nc, e.w_star, o.power_iterations,
                                        derive_seed(o.seed, SeedStream::kTheory, 3));
  e.k.L = std::max(e.L_w0, e.L_star);
  e.sigma2_batch =
      minibatch_gradient_variance(model, train, n, e.w_star, o.variance_batch, o.variance_draws,
                                  derive_seed(o.seed, SeedStream::kTheory, 4));
  e.k.sigma2 = e.sigma2_batch * o.variance_batch;
  e.k.initial_gap = e.f0 - e.f_star;
  auto ws = model.make_workspace(static_cast<int>(kBlock));
  e.train_loss_star = model.evaluate(e.w_star, train, *ws, o.eval_samples).loss;
  e.train_objective_star = e.train_loss_star + model.l2_penalty(e.w_star);
  e.l2_term_star = e.f_star - model.evaluate(e.w_star, train, *ws, n).loss;
  return e;
}

}  // namespace stalesgd
