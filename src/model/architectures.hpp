// The architectures behind make_model (factory.cpp), one file each, and the TorchScript models
// it loads (torchscript.cpp). Shapes are checked by
// make_model; these builders assume they fit.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stalesgd/model/model.hpp"

namespace stalesgd::model {

// Multinomial logistic regression: one dense layer, D -> classes.
std::unique_ptr<Model> make_softmax(const ImageShape& input, int classes, float l2);

// D -> hidden[0] -> ... -> classes, ReLU after every hidden layer.
std::unique_ptr<Model> make_mlp(const ImageShape& input, int classes,
                                const std::vector<int>& hidden, float l2);

// LeNet-5 for 1x28x28 images.
std::unique_ptr<Model> make_lenet(int classes, float l2);

// A small CNN for 3x32x32 images.
std::unique_ptr<Model> make_cifar_cnn(int classes, float l2);

// The factory register_model() holds for `name`, if any (registry.cpp).
std::optional<ModelFactory> registered_factory(std::string_view name);

// "torchscript:PATH" (a non-empty PATH).
bool is_torchscript_name(std::string_view name);

// Loads the TorchScript plugin, if it is there and NAME's file exists, so that the build's
// libraries name its LibTorch (util/build_info.hpp) before a run records them. A missing file is
// refused by make_torchscript without loading LibTorch (about 1 s), and so is a missing plugin.
void load_torchscript_plugin(std::string_view name);

// The scripted module in PATH, through the TorchScript plugin; errors name the file and the fix.
Result<std::unique_ptr<Model>> make_torchscript(std::string_view name, const ImageShape& input,
                                                int classes, float l2);

// A trained flat vector `w` of the module NAME ("torchscript:PATH") written into the module in
// `into` (PATH itself when empty) by parameter and buffer name: the TorchScript file's and the
// state_dict's bytes (`stalesgd export`, docs/models.md). Errors are one line.
struct TorchScriptFiles {
  std::string module;      // a TorchScript file: torch.jit.load
  std::string state_dict;  // {name: tensor}: torch.load, then load_state_dict
};
Result<TorchScriptFiles> export_torchscript(std::string_view name, const std::string& into,
                                            std::span<const float> w);

}  // namespace stalesgd::model
