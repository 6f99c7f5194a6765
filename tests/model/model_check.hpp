// Helpers for the whole-model tests: a random batch of a given shape, and a finite-difference
// check of Model::loss_and_gradient on it.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "model/gradient_check.hpp"
#include "stalesgd/model/model.hpp"

namespace stalesgd::test {

inline ModelSpec spec(std::string name, std::vector<int> hidden = {}, float l2 = 0.0f) {
  ModelSpec s;
  s.name = std::move(name);
  s.hidden = std::move(hidden);
  s.l2 = l2;
  return s;
}

// n samples in [0, 1] with roughly `zeros` of them exactly 0 (MNIST: 0.81), random labels.
struct RandomBatch {
  std::vector<float> features;
  std::vector<std::uint8_t> labels;
  Batch batch() const { return {features.data(), labels.data(), static_cast<int>(labels.size())}; }
};

inline RandomBatch random_batch(const ImageShape& shape, int n, int classes, double zeros,
                                std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  RandomBatch b;
  b.features.resize(shape.dim() * n);
  for (auto& v : b.features) v = u(rng) < zeros ? 0.0f : u(rng);
  for (int i = 0; i < n; ++i) b.labels.push_back(static_cast<std::uint8_t>(rng() % classes));
  return b;
}

// Gradient of the model's loss at its seed-1 initialisation against central differences of the
// (float) loss it returns.
inline GradCheck check_model_gradient(const Model& model, const RandomBatch& data,
                                      GradCheckOptions opt = {}) {
  std::vector<float> w(model.num_params());
  model.init_params(w, 1);
  auto ws = model.make_workspace(data.batch().size);
  std::vector<float> grad(w.size()), scratch(w.size());
  model.loss_and_gradient(w, data.batch(), grad, *ws);
  auto loss = [&] {
    return static_cast<double>(*model.loss_and_gradient(w, data.batch(), scratch, *ws));
  };
  return check_gradient(std::span<float>(w), std::span<const float>(grad), loss, opt);
}

}  // namespace stalesgd::test
