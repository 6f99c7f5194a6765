// lenet: LeNet-5 (LeCun et al. 1998) for 1x28x28 images, with ReLU and max pooling:
//   conv5x5(6, pad 2) 28x28 -> maxpool2 14x14 -> conv5x5(16) 10x10 -> maxpool2 5x5
//   -> fc 400-120 -> fc 120-84 -> fc 84-classes.              61,706 parameters for 10 classes.
#include "model/architectures.hpp"
#include "model/layers/conv2d.hpp"
#include "model/layers/dense.hpp"
#include "model/layers/maxpool.hpp"
#include "model/network.hpp"

namespace stalesgd::model {

std::unique_ptr<Model> make_lenet(int classes, float l2) {
  std::vector<std::unique_ptr<Layer>> layers;
  layers.push_back(std::make_unique<Conv2d>(ConvConfig{1, 28, 28, 6, 5, 2, true, true}));
  layers.push_back(std::make_unique<MaxPool2>(PoolConfig{6, 28, 28}));
  layers.push_back(std::make_unique<Conv2d>(ConvConfig{6, 14, 14, 16, 5, 0, true, false}));
  layers.push_back(std::make_unique<MaxPool2>(PoolConfig{16, 10, 10}));
  layers.push_back(std::make_unique<Dense>(DenseConfig{400, 120, true, false}));
  layers.push_back(std::make_unique<Dense>(DenseConfig{120, 84, true, false}));
  layers.push_back(std::make_unique<Dense>(DenseConfig{84, classes, false, false}));
  return std::make_unique<Network>(
      "lenet(conv5x5x6-pool-conv5x5x16-pool-fc120-fc84-fc" + std::to_string(classes) + ")",
      ImageShape{1, 28, 28}, classes, std::move(layers), l2);
}

}  // namespace stalesgd::model
