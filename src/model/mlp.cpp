// mlp: fully connected layers with ReLU, D -> hidden... -> classes (default one hidden layer of
// 128; the CLI's --hidden 256,128 gives 784-256-128-10 on MNIST).
#include <fmt/format.h>

#include "model/architectures.hpp"
#include "model/layers/dense.hpp"
#include "model/network.hpp"

namespace stalesgd::model {

std::unique_ptr<Model> make_mlp(const ImageShape& input, int classes,
                                const std::vector<int>& hidden, float l2) {
  std::vector<std::unique_ptr<Layer>> layers;
  int prev = static_cast<int>(input.dim());
  std::string sizes = std::to_string(prev);
  for (int h : hidden) {
    layers.push_back(std::make_unique<Dense>(DenseConfig{prev, h, true, layers.empty()}));
    prev = h;
    sizes += fmt::format("-{}", h);
  }
  layers.push_back(std::make_unique<Dense>(DenseConfig{prev, classes, false, layers.empty()}));
  return std::make_unique<Network>(fmt::format("mlp({}-{})", sizes, classes), input, classes,
                                   std::move(layers), l2);
}

}  // namespace stalesgd::model
