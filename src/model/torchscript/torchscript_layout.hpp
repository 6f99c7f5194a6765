// The flat vector of a TorchScript module, which the server owns as it owns every model's: the
// module's parameters in named_parameters() order, each row-major, then its buffers (BatchNorm
// running statistics, num_batches_tracked, any registered buffer) in named_buffers() order, as
// float32 whatever their own type (docs/models.md, "Train mode and buffers"). The model and the
// export (`stalesgd export`) both read and write modules through it.
#pragma once

// First: clang's C++20 std::vector needs c10::IValue complete where LibTorch 1.13's headers use
// it (the ASan build is clang's).
#include <ATen/core/ivalue.h>
// clang-format off
#include <torch/script.h>
// clang-format on

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace stalesgd::model {

struct LayoutEntry {
  std::string name;  // "layer1.0.bn1.running_mean"
  std::size_t offset = 0;
  std::size_t numel = 0;
  std::vector<std::int64_t> sizes;
  at::ScalarType type = at::kFloat;
  bool weight = false;  // a parameter of two or more dimensions: what --l2 penalises
};

struct Layout {
  std::vector<LayoutEntry> params;
  std::vector<LayoutEntry> buffers;
  std::size_t total = 0;  // floats in the flat vector
  std::size_t state = 0;  // of which the buffers', at the end
};

// The module's layout; an empty string, or one line naming what cannot be laid out (a
// parameter that is not float32, a buffer of a type without a float value).
std::string read_layout(const torch::jit::Module& module, Layout& layout);

// Loads a scripted module for training or export, its parameters requiring gradients, and its
// layout; an empty module with `error` set to one line naming PATH when it does not load (a
// state_dict given for a module is named as such) or cannot be laid out. In
// torchscript_module.cpp.
torch::jit::Module load_module(const std::string& path, Layout& layout, std::string& error);

// Whether forward, with every submodule's forward inlined, has a node that draws random numbers
// (dropout, bernoulli, rand*, normal, uniform, multinomial, rrelu). In torchscript_module.cpp.
bool forward_draws(const torch::jit::Module& m);

// One intra-op thread for LibTorch and the OpenBLAS it calls, set once per process and once
// per calling thread: the engine's workers are the parallelism. In torchscript_module.cpp.
void use_one_thread();

// "a 16 x 1 x 3 x 3 tensor"
std::string sizes_text(at::IntArrayRef sizes);

// w into the tensors (a module's parameters() and buffers(), in layout order), converting the
// buffers to their own types; no autograd record.
void copy_in(const Layout& layout, std::span<const float> w, const std::vector<at::Tensor>& params,
             const std::vector<at::Tensor>& buffers);
// The tensors into w (num = layout.total floats).
void copy_out(const Layout& layout, const std::vector<at::Tensor>& params,
              const std::vector<at::Tensor>& buffers, std::span<float> w);
// The buffers alone into `state` (layout.state floats, the end of w).
void copy_buffers_out(const Layout& layout, const std::vector<at::Tensor>& buffers,
                      std::span<float> state);

}  // namespace stalesgd::model
