// softmax: multinomial logistic regression, p(y | x) = softmax(W x + b). With the optional L2
// term lambda/2 ||W||^2 (--l2) the loss is strongly convex: the setting of the error-runtime
// convergence bounds of Dutta et al. 2018.
#include <fmt/format.h>

#include "model/architectures.hpp"
#include "model/layers/dense.hpp"
#include "model/network.hpp"

namespace stalesgd::model {

std::unique_ptr<Model> make_softmax(const ImageShape& input, int classes, float l2) {
  const int dim = static_cast<int>(input.dim());
  std::vector<std::unique_ptr<Layer>> layers;
  layers.push_back(std::make_unique<Dense>(DenseConfig{dim, classes, false, true}));
  return std::make_unique<Network>(fmt::format("softmax({}-{})", dim, classes), input, classes,
                                   std::move(layers), l2);
}

}  // namespace stalesgd::model
