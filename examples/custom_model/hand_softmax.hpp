// HandSoftmax: multinomial logistic regression written by hand against stalesgd::Model, and
// register_hand_softmax(), which adds it as the model "hand-softmax" (docs/models.md, "Your
// own model in C++"). Used by the example program (main.cpp) and the plug-in that gives it to
// the `stalesgd` CLI (plugin.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <stalesgd/model/model.hpp>

namespace hand_softmax {

// Scratch per thread: the logits of one batch.
struct Scratch final : stalesgd::Workspace {
  explicit Scratch(std::size_t n) : logits(n) {}
  std::vector<float> logits;
};

// W (classes x D, row-major) then b (classes); loss: mean softmax cross-entropy.
class HandSoftmax final : public stalesgd::Model {
 public:
  HandSoftmax(std::size_t dim, int classes) : d_(dim), c_(static_cast<std::size_t>(classes)) {}

  std::string describe() const override { return "hand-softmax"; }
  std::size_t num_params() const override { return c_ * d_ + c_; }
  void init_params(std::span<float> w, std::uint64_t) const override {
    std::fill(w.begin(), w.end(), 0.0f);  // a convex model: zeros are a fine start
  }
  std::unique_ptr<stalesgd::Workspace> make_workspace(int max_batch) const override {
    return std::make_unique<Scratch>(static_cast<std::size_t>(max_batch) * c_);
  }

  std::optional<float> loss_and_gradient(std::span<const float> w, const stalesgd::Batch& b,
                                         std::span<float> grad, stalesgd::Workspace& ws,
                                         const std::atomic<bool>*) const override {
    std::fill(grad.begin(), grad.end(), 0.0f);
    auto& logits = static_cast<Scratch&>(ws).logits;
    double loss = 0.0;
    for (int i = 0; i < b.size; ++i) {
      const float* x = b.features + static_cast<std::size_t>(i) * d_;
      float* z = logits.data() + static_cast<std::size_t>(i) * c_;
      loss += softmax(w, x, z, b.labels[i]);
      for (std::size_t k = 0; k < c_; ++k) {
        const float g = (z[k] - (k == b.labels[i] ? 1.0f : 0.0f)) / static_cast<float>(b.size);
        for (std::size_t j = 0; j < d_; ++j) grad[k * d_ + j] += g * x[j];
        grad[c_ * d_ + k] += g;
      }
    }
    return static_cast<float>(loss / b.size);
  }

  double l2_penalty(std::span<const float>) const override { return 0.0; }

  stalesgd::EvalSums evaluate_sums(std::span<const float> w, const stalesgd::Split& data,
                                   std::size_t first, std::size_t count,
                                   stalesgd::Workspace&) const override {
    stalesgd::EvalSums sums;
    std::vector<float> z(c_);
    for (std::size_t i = first; i < first + count; ++i) {
      sums.loss += softmax(w, data.sample(i), z.data(), data.labels[i]);
      std::size_t best = 0;
      for (std::size_t k = 1; k < c_; ++k) best = z[k] > z[best] ? k : best;
      sums.errors += best != data.labels[i] ? 1 : 0;
    }
    return sums;
  }

 private:
  // Writes the class probabilities of `x` into `z`; returns -log p(label).
  double softmax(std::span<const float> w, const float* x, float* z, int label) const {
    float top = -INFINITY;
    for (std::size_t k = 0; k < c_; ++k) {
      float s = w[c_ * d_ + k];
      for (std::size_t j = 0; j < d_; ++j) s += w[k * d_ + j] * x[j];
      z[k] = s;
      top = std::max(top, s);
    }
    double sum = 0.0;
    for (std::size_t k = 0; k < c_; ++k) sum += std::exp(double(z[k] - top));
    const double log_label = double(z[label] - top) - std::log(sum);
    for (std::size_t k = 0; k < c_; ++k) z[k] = static_cast<float>(std::exp(z[k] - top) / sum);
    return -log_label;
  }

  std::size_t d_;
  std::size_t c_;
};

}  // namespace hand_softmax

// Makes "hand-softmax" a model name in this process, like a built-in one.
inline stalesgd::Status register_hand_softmax() {
  return stalesgd::register_model(
      "hand-softmax",
      [](const stalesgd::ImageShape& input, int classes,
         float) -> stalesgd::Result<std::unique_ptr<stalesgd::Model>> {
        return std::unique_ptr<stalesgd::Model>(
            std::make_unique<hand_softmax::HandSoftmax>(input.dim(), classes));
      });
}
