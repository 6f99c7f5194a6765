#include "model/network.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <Eigen/Core>

namespace stalesgd::model {
namespace {

// The cancel flag carries no data with it (a cancelled gradient is discarded whole), so a
// relaxed load is enough; the engine's own synchronisation orders everything else.
bool cancelled(const std::atomic<bool>* cancel) {
  return cancel != nullptr && cancel->load(std::memory_order_relaxed);
}

NetworkWorkspace& as_network(Workspace& ws, const Network* model) {
  auto* nws = dynamic_cast<NetworkWorkspace*>(&ws);
  if (nws == nullptr || nws->owner != model) {
    throw std::invalid_argument("the workspace was made by another model");
  }
  return *nws;
}

}  // namespace

Network::Network(std::string description, ImageShape input, int num_classes,
                 std::vector<std::unique_ptr<Layer>> layers, float l2)
    : description_(std::move(description)),
      input_(input),
      num_classes_(num_classes),
      layers_(std::move(layers)),
      l2_(l2) {
  if (layers_.empty()) throw std::invalid_argument("a network needs at least one layer");
  if (layers_.front()->input_size() != input_.dim() ||
      layers_.back()->output_size() != static_cast<std::size_t>(num_classes_)) {
    throw std::invalid_argument(description_ + ": layers do not match the input or classes");
  }
  offsets_.push_back(0);
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    if (i > 0 && layers_[i]->input_size() != layers_[i - 1]->output_size()) {
      throw std::invalid_argument(description_ + ": layer sizes do not chain");
    }
    offsets_.push_back(offsets_.back() + layers_[i]->num_params());
  }
}

void Network::init_params(std::span<float> w, std::uint64_t seed) const {
  if (w.size() != num_params()) throw std::invalid_argument("init_params: wrong parameter count");
  Rng rng(seed);
  for (std::size_t i = 0; i < layers_.size(); ++i)
    layers_[i]->init_params(w.data() + offsets_[i], rng);
}

std::unique_ptr<Workspace> Network::make_workspace(int max_batch) const {
  if (max_batch < 1) throw std::invalid_argument("make_workspace: max_batch must be >= 1");
  auto ws = std::make_unique<NetworkWorkspace>();
  ws->owner = this;
  ws->max_batch = max_batch;
  std::size_t widest = 0;  // largest activation: every dL/d(activation) fits
  for (const auto& layer : layers_) {
    ws->act.emplace_back(layer->output_size() * max_batch);
    ws->scratch.push_back(layer->make_scratch(max_batch, ws->gemm));
    widest = std::max(widest, layer->output_size());
  }
  ws->grad[0].resize(widest * max_batch);
  ws->grad[1].resize(widest * max_batch);
  ws->loss.reserve(max_batch);
  return ws;
}

bool Network::forward(const float* w, const float* x, int n, NetworkWorkspace& ws,
                      const std::atomic<bool>* cancel) const {
  const float* in = x;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    if (cancelled(cancel)) return false;
    layers_[i]->forward(w + offsets_[i], in, ws.act[i].data(), n, *ws.scratch[i], ws.gemm);
    in = ws.act[i].data();
  }
  return true;
}

std::optional<float> Network::loss_and_gradient(std::span<const float> w, const Batch& batch,
                                                std::span<float> grad, Workspace& workspace,
                                                const std::atomic<bool>* cancel) const {
  NetworkWorkspace& ws = as_network(workspace, this);
  const int n = batch.size;
  if (w.size() != num_params() || grad.size() != num_params()) {
    throw std::invalid_argument("loss_and_gradient: wrong parameter or gradient size");
  }
  if (n < 1 || n > ws.max_batch) {
    throw std::invalid_argument(
        fmt::format("loss_and_gradient: batch of {} with a workspace for {}", n, ws.max_batch));
  }
  if (!forward(w.data(), batch.features, n, ws, cancel)) return std::nullopt;

  float* g = ws.grad[0].data();
  const CrossEntropySums sums =
      softmax_cross_entropy(ws.act.back().data(), batch.labels, num_classes_, n, g, ws.loss);
  double loss = sums.loss / n;
  int cur = 0;
  for (std::size_t i = layers_.size(); i-- > 0;) {
    if (cancelled(cancel)) return std::nullopt;
    const float* in = i > 0 ? ws.act[i - 1].data() : batch.features;
    float* din = i > 0 ? ws.grad[1 - cur].data() : nullptr;
    layers_[i]->backward(w.data() + offsets_[i], in, ws.act[i].data(), ws.grad[cur].data(), din,
                         grad.data() + offsets_[i], n, *ws.scratch[i], ws.gemm);
    cur = 1 - cur;
  }
  if (l2_ != 0.0f) {
    loss += l2_penalty(w);
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      const auto count = static_cast<Eigen::Index>(layers_[i]->num_weights());
      Eigen::Map<const Eigen::VectorXf> wi(w.data() + offsets_[i], count);
      Eigen::Map<Eigen::VectorXf> gi(grad.data() + offsets_[i], count);
      gi += l2_ * wi;
    }
  }
  return static_cast<float>(loss);
}

double Network::l2_penalty(std::span<const float> w) const {
  if (w.size() != num_params()) throw std::invalid_argument("l2_penalty: wrong parameter count");
  if (l2_ == 0.0f) return 0.0;
  double penalty = 0.0;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const auto count = static_cast<Eigen::Index>(layers_[i]->num_weights());
    Eigen::Map<const Eigen::VectorXf> wi(w.data() + offsets_[i], count);
    penalty += 0.5 * l2_ * static_cast<double>(wi.squaredNorm());
  }
  return penalty;
}

EvalSums Network::evaluate_sums(std::span<const float> w, const Split& data, std::size_t first,
                                std::size_t count, Workspace& workspace) const {
  NetworkWorkspace& ws = as_network(workspace, this);
  if (w.size() != num_params()) throw std::invalid_argument("evaluate: wrong parameter count");
  if (data.dim() != input_.dim()) {
    throw std::invalid_argument(
        fmt::format("evaluate: samples of {} floats for a model of {}", data.dim(), input_.dim()));
  }
  if (first > data.count || count > data.count - first) {
    throw std::invalid_argument(fmt::format("evaluate: samples [{}, {}) of a split of {}", first,
                                            first + count, data.count));
  }
  EvalSums total;
  for (std::size_t done = 0; done < count; done += ws.max_batch) {
    const int n = static_cast<int>(std::min<std::size_t>(ws.max_batch, count - done));
    forward(w.data(), data.sample(first + done), n, ws, nullptr);
    const CrossEntropySums sums = softmax_cross_entropy(
        ws.act.back().data(), data.labels.data() + first + done, num_classes_, n, nullptr, ws.loss);
    total.loss += sums.loss;
    total.errors += sums.errors;
  }
  return total;
}

double Network::gradient_flops(int batch_size) const {
  double total = 0.0;
  for (std::size_t i = 0; i < layers_.size(); ++i) total += layers_[i]->flops(batch_size, i > 0);
  return total;
}

}  // namespace stalesgd::model
