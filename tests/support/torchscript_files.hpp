// TorchScript files for the tests, written by tools/export_model.py (Debian's python3-torch, and
// python3-torchvision for its resnet; tools/test.sh installs them) and kept in the build folder,
// so that the tests of one build script each model once.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace stalesgd::test {

// `tools/export_model.py MODEL --out <file> ARGS...`, reused while the file is newer than the
// script; `name` names the file. Fails the test with the script's output when it fails.
std::filesystem::path exported_model(const std::string& name, const std::string& model,
                                     const std::string& args = "");

// Scripts `model` with the initial weights `w` (the flat float32 vector in
// named_parameters() order) into `out`.
void export_with_weights(const std::filesystem::path& out, const std::string& model,
                         std::span<const float> w, const std::string& args = "");

// The built-in mlp's flat vector (each Dense layer's W column-major, out x in, then b) in
// PyTorch's nn.Linear layout (weight row-major out x in, then bias), and back.
std::vector<float> mlp_to_torch(std::span<const float> w, const std::vector<int>& sizes);
std::vector<float> mlp_from_torch(std::span<const float> w, const std::vector<int>& sizes);

}  // namespace stalesgd::test
