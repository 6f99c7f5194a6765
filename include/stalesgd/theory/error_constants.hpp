// The constants of the paper's error bounds (include/stalesgd/theory/error_bound.hpp) for one
// model and data set: c from the model's L2 term, L by power iteration on Hessian-vector
// products, sigma^2 from minibatch gradients at w*, and w*, F* and F(w_0) from a long
// sequential minimisation. docs/theory.md, "Error", says how and where each is loose.
//
// Thread safety: free functions over const inputs; each runs its gradients as oneTBB tasks
// (parallel_for_index) whose results are combined in index order, so a result does not depend
// on the number of threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "stalesgd/data/dataset.hpp"
#include "stalesgd/model/model.hpp"
#include "stalesgd/theory/error_bound.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

struct ConstantsOptions {
  std::size_t samples = 0;  // F is the mean over the first N training samples (0: all)
  std::size_t curvature_samples = 10000;  // power iteration over the first N of those (0: all)
  int power_iterations = 20;              // per point (w_0 and w*); L is the larger estimate
  int variance_batch = 32;                // minibatch size of the sigma^2 estimate
  int variance_draws = 256;               // minibatches drawn for it
  int optimum_epochs = 30;                // epochs of the minimisation that finds w*
  std::size_t eval_samples = 10000;       // evals.csv's train_loss and train_objective: N
  std::uint64_t seed = 1;                 // the run's seed: w_0 and the draws
};

struct EstimatedConstants {
  ErrorConstants k;              // c, L, sigma^2 (one sample's), F(w_0) - F*
  double f0 = 0.0;               // F(w_0), w_0 the trainer's initialisation for `seed`
  double f_star = 0.0;           // F(w*)
  double grad_norm_star = 0.0;   // |grad F(w*)|: F(w*) - min F <= |grad F(w*)|^2 / (2c)
  double L_w0 = 0.0;             // top Hessian eigenvalue at w_0
  double L_star = 0.0;           // and at w*
  double sigma2_batch = 0.0;     // E|g_B - grad F|^2 for B = variance_batch, at w*
  double train_loss_star = 0.0;  // mean CE of w* over the first eval_samples (no L2 term)
  double l2_term_star = 0.0;     // F(w*) minus its mean CE over the same samples as F
  // train_loss_star plus the L2 term of w*: evals.csv's train_objective at w*, so the
  // measured excess F(w) - F* is taken on the same samples at both points.
  double train_objective_star = 0.0;
  std::vector<float> w_star;
};

// F(w) and grad F(w) (into `grad`, num_params doubles) over the first n samples of `data`.
double full_loss_and_gradient(const Model& model, const Split& data, std::size_t n,
                              std::span<const float> w, std::vector<double>& grad);

// The largest eigenvalue of the Hessian of F (first n samples) at w: power iteration on
// Hessian-vector products by a forward difference of gradients, from a seeded random start.
double power_iteration_smoothness(const Model& model, const Split& data, std::size_t n,
                                  std::span<const float> w, int iterations, std::uint64_t seed);

// E|g_B(w) - grad F(w)|^2 for a minibatch of `batch` samples drawn uniformly with replacement
// from the first n, averaged over `draws` minibatches; one sample's variance is batch times it.
double minibatch_gradient_variance(const Model& model, const Split& data, std::size_t n,
                                   std::span<const float> w, int batch, int draws,
                                   std::uint64_t seed);

// Everything above for `model` (whose L2 coefficient is `l2`, the strong convexity c).
// Refuses l2 <= 0: without it the softmax is not strongly convex and the bounds do not apply.
Result<EstimatedConstants> estimate_error_constants(const Model& model, double l2,
                                                    const Split& train,
                                                    const ConstantsOptions& options);

}  // namespace stalesgd
