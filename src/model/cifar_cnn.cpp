// cifar-cnn: a small VGG-style CNN for 3x32x32 images (three 3x3 conv + 2x2 max-pool stages,
// doubling the channels, then two dense layers):
//   conv3x3(16) 32x32 -> pool 16x16 -> conv3x3(32) -> pool 8x8 -> conv3x3(64) -> pool 4x4
//   -> fc 1024-64 -> fc 64-classes.                             89,834 parameters for 10 classes.
// Small on purpose: the parameter server copies and updates the whole vector every step.
#include "model/architectures.hpp"
#include "model/layers/conv2d.hpp"
#include "model/layers/dense.hpp"
#include "model/layers/maxpool.hpp"
#include "model/network.hpp"

namespace stalesgd::model {

std::unique_ptr<Model> make_cifar_cnn(int classes, float l2) {
  std::vector<std::unique_ptr<Layer>> layers;
  layers.push_back(std::make_unique<Conv2d>(ConvConfig{3, 32, 32, 16, 3, 1, true, true}));
  layers.push_back(std::make_unique<MaxPool2>(PoolConfig{16, 32, 32}));
  layers.push_back(std::make_unique<Conv2d>(ConvConfig{16, 16, 16, 32, 3, 1, true, false}));
  layers.push_back(std::make_unique<MaxPool2>(PoolConfig{32, 16, 16}));
  layers.push_back(std::make_unique<Conv2d>(ConvConfig{32, 8, 8, 64, 3, 1, true, false}));
  layers.push_back(std::make_unique<MaxPool2>(PoolConfig{64, 8, 8}));
  layers.push_back(std::make_unique<Dense>(DenseConfig{1024, 64, true, false}));
  layers.push_back(std::make_unique<Dense>(DenseConfig{64, classes, false, false}));
  return std::make_unique<Network>(
      "cifar-cnn(conv3x3x16-pool-conv3x3x32-pool-conv3x3x64-pool-fc64-fc" +
          std::to_string(classes) + ")",
      ImageShape{3, 32, 32}, classes, std::move(layers), l2);
}

}  // namespace stalesgd::model
