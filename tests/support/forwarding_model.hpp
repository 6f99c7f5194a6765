// ForwardingModel: a Model that hands every call to another one, for tests that change one
// behaviour of a real model (a gradient or an evaluation that throws, or waits).
#pragma once

#include <memory>

#include "stalesgd/model/model.hpp"

namespace stalesgd::test {

class ForwardingModel : public Model {
 public:
  explicit ForwardingModel(std::unique_ptr<Model> inner) : inner_(std::move(inner)) {}
  std::string describe() const override { return inner_->describe(); }
  std::size_t num_params() const override { return inner_->num_params(); }
  void init_params(std::span<float> w, std::uint64_t seed) const override {
    inner_->init_params(w, seed);
  }
  std::unique_ptr<Workspace> make_workspace(int max_batch) const override {
    return inner_->make_workspace(max_batch);
  }
  std::optional<float> loss_and_gradient(std::span<const float> w, const Batch& batch,
                                         std::span<float> grad, Workspace& ws,
                                         const std::atomic<bool>* cancel) const override {
    return inner_->loss_and_gradient(w, batch, grad, ws, cancel);
  }
  double l2_penalty(std::span<const float> w) const override { return inner_->l2_penalty(w); }
  EvalSums evaluate_sums(std::span<const float> w, const Split& data, std::size_t first,
                         std::size_t count, Workspace& ws) const override {
    return inner_->evaluate_sums(w, data, first, count, ws);
  }

 protected:
  const Model& inner() const { return *inner_; }

 private:
  std::unique_ptr<Model> inner_;
};

}  // namespace stalesgd::test
