// LocalSteps: Q local SGD steps as one job's "gradient" (model/local_steps.hpp).
#include "model/local_steps.hpp"

#include <vector>

namespace stalesgd {
namespace {

struct LocalWorkspace final : Workspace {
  std::unique_ptr<Workspace> inner;
  std::vector<float> y;     // the worker's local point
  std::vector<float> step;  // one local step's gradient
};

class LocalSteps final : public Model {
 public:
  LocalSteps(std::unique_ptr<Model> inner, int steps, double local_lr, std::size_t input_dim)
      : inner_(std::move(inner)), steps_(steps), local_lr_(local_lr), dim_(input_dim) {}

  std::string describe() const override { return inner_->describe(); }
  std::size_t num_params() const override { return inner_->num_params(); }
  std::size_t num_state() const override { return inner_->num_state(); }
  void init_params(std::span<float> w, std::uint64_t seed) const override {
    inner_->init_params(w, seed);
  }
  // Engines size a worker's workspace by --batch, one local step's samples.
  std::unique_ptr<Workspace> make_workspace(int max_batch) const override {
    auto ws = std::make_unique<LocalWorkspace>();
    ws->inner = inner_->make_workspace(max_batch);
    return ws;
  }

  std::optional<float> loss_and_gradient(std::span<const float> w, const Batch& batch,
                                         std::span<float> grad, Workspace& workspace,
                                         const std::atomic<bool>* cancel) const override {
    auto& ws = static_cast<LocalWorkspace&>(workspace);
    const std::size_t n = w.size();
    const std::size_t descended = n - inner_->num_state();
    ws.y.assign(w.begin(), w.end());
    ws.step.resize(n);
    const int b = batch.size / steps_;
    const auto lr = static_cast<float>(local_lr_);
    double loss = 0.0;
    for (int q = 0; q < steps_; ++q) {
      const auto first = static_cast<std::size_t>(q) * static_cast<std::size_t>(b);
      const Batch part{batch.features + first * dim_, batch.labels + first, b,
                       batch.seed + static_cast<std::uint64_t>(q)};
      const auto l = inner_->loss_and_gradient(ws.y, part, ws.step, *ws.inner, cancel);
      if (!l) return std::nullopt;
      loss += *l;
      // Parameters descend; state (BatchNorm buffers) takes its change old - new in full.
      for (std::size_t i = 0; i < descended; ++i) ws.y[i] -= lr * ws.step[i];
      for (std::size_t i = descended; i < n; ++i) ws.y[i] -= ws.step[i];
    }
    for (std::size_t i = 0; i < n; ++i) grad[i] = w[i] - ws.y[i];
    return static_cast<float>(loss / steps_);
  }

  double l2_penalty(std::span<const float> w) const override { return inner_->l2_penalty(w); }
  EvalSums evaluate_sums(std::span<const float> w, const Split& data, std::size_t first,
                         std::size_t count, Workspace& ws) const override {
    return inner_->evaluate_sums(w, data, first, count, *static_cast<LocalWorkspace&>(ws).inner);
  }
  double gradient_flops(int batch_size) const override {
    return inner_->gradient_flops(batch_size) * steps_;
  }

 private:
  std::unique_ptr<Model> inner_;
  int steps_;
  double local_lr_;
  std::size_t dim_;
};

}  // namespace

std::unique_ptr<Model> make_local_steps(std::unique_ptr<Model> inner, int steps, double local_lr,
                                        std::size_t input_dim) {
  return std::make_unique<LocalSteps>(std::move(inner), steps, local_lr, input_dim);
}

}  // namespace stalesgd
