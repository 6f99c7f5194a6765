// TorchScript files for the tests, written by tools/export_model.py (Debian's python3-torch, and
// python3-torchvision for its resnet; tools/test.sh installs them) and kept in the build folder,
// so that the tests of one build script each model once.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "support/fixtures.hpp"
#include "support/sanitized.hpp"

namespace stalesgd::test {

// The CLI, for a command that loads the TorchScript plugin. Under AddressSanitizer its leak
// check at exit is off there: LeakSanitizer's stop-the-world tracer now and then crashes on
// LibTorch's thread pools at exit ("Tracer caught signal 11", exit 1 after a run that wrote
// everything), and LibTorch is not instrumented, so its leaks could not be told apart anyway.
// The engines around a model are leak-checked by the built-in models' tests (docs/models.md).
inline const std::string kTorchCli =
    kSanitized ? "ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0\" " + kCli : kCli;

// For a test that loads LibTorch into the test process itself: under AddressSanitizer the leak
// check runs now, before LibTorch's thread pools exist, and therefore not at exit, where its
// tracer crashes on them now and then (as kTorchCli says; __lsan_do_leak_check runs the exit
// check early, once). A no-op in the other builds.
void leak_check_before_libtorch();

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
