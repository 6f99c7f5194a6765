// Network: a Model made of a chain of Layers followed by softmax cross-entropy, over one flat
// parameter vector (each layer owns a contiguous slice: its weights, then its biases). Every
// architecture (softmax, mlp, lenet, cifar-cnn) is a Network; only the layer list differs.
//
// Thread safety: immutable after construction; its const methods run concurrently on any number
// of threads, each with its own NetworkWorkspace.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/buffer.hpp"
#include "model/gemm.hpp"
#include "model/layers/cross_entropy.hpp"
#include "model/layers/layer.hpp"
#include "stalesgd/model/model.hpp"

namespace stalesgd::model {

// One thread's scratch, sized for max_batch samples when made; a step never resizes it.
struct NetworkWorkspace final : Workspace {
  const void* owner = nullptr;  // the Network that made it (its scratch fits no other)
  int max_batch = 0;
  std::vector<Buffer> act;  // act[i]: output of layer i (output_size x max_batch)
  Buffer grad[2];           // dL/d(activation), ping-ponged through the backward pass
  std::vector<std::unique_ptr<LayerScratch>> scratch;  // one per layer (may be null)
  GemmScratch gemm;  // packing panels shared by every layer's products
  CrossEntropyScratch loss;
};

class Network final : public Model {
 public:
  // `l2` adds l2/2 * ||W||^2 over every layer's weights (not its biases) to the loss.
  Network(std::string description, ImageShape input, int num_classes,
          std::vector<std::unique_ptr<Layer>> layers, float l2);

  std::string describe() const override { return description_; }
  std::size_t num_params() const override { return offsets_.back(); }
  // Each layer in turn draws from one Rng seeded with `seed` (callers pass a derived seed).
  void init_params(std::span<float> w, std::uint64_t seed) const override;
  std::unique_ptr<Workspace> make_workspace(int max_batch) const override;
  std::optional<float> loss_and_gradient(std::span<const float> w, const Batch& batch,
                                         std::span<float> grad, Workspace& ws,
                                         const std::atomic<bool>* cancel) const override;
  // l2/2 * ||W||^2 over every layer's weights (not its biases), summed layer by layer.
  double l2_penalty(std::span<const float> w) const override;
  EvalSums evaluate_sums(std::span<const float> w, const Split& data, std::size_t first,
                         std::size_t count, Workspace& ws) const override;
  double gradient_flops(int batch_size) const override;

  const std::vector<std::unique_ptr<Layer>>& layers() const { return layers_; }
  std::size_t param_offset(std::size_t layer) const { return offsets_[layer]; }

 private:
  // Runs every layer on n samples of x; false as soon as `cancel` reads true between layers.
  bool forward(const float* w, const float* x, int n, NetworkWorkspace& ws,
               const std::atomic<bool>* cancel) const;

  std::string description_;
  ImageShape input_;
  int num_classes_;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<std::size_t> offsets_;  // layer i's parameters start at offsets_[i]; back() = total
  float l2_;
};

}  // namespace stalesgd::model
