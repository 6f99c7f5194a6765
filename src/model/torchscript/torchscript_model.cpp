// The TorchScript plugin: a Model over a scripted nn.Module, computed with LibTorch. Built as
// libstalesgd_torchscript.so and loaded by src/model/torchscript.cpp (docs/models.md).
//
// The server owns the parameters as one flat vector, like every model's: the module's
// parameters in named_parameters() order, each row-major. Each Workspace holds its own clone
// of the module, so that workers compute at once without sharing tensors; a step copies the
// flat vector into the clone's parameters, runs forward, cross-entropy and autograd, and copies
// the gradients out. LibTorch computes on the calling thread only (one intra-op thread).
#include <dlfcn.h>

// First: clang's C++20 std::vector needs c10::IValue complete where LibTorch 1.13's headers use
// it (the ASan build is clang's).
#include <ATen/core/ivalue.h>
// clang-format off
#include <torch/csrc/autograd/autograd.h>
#include <torch/script.h>
#include <torch/version.h>

#include <ATen/Parallel.h>
// clang-format on

#include <cmath>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <sstream>

#include "model/torchscript_plugin.hpp"

namespace stalesgd::model {
namespace {

// The first line of a LibTorch message (they run to pages of TorchScript stack).
std::string first_line(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t") != std::string::npos) return line;
  }
  return "no message";
}

std::string shape_text(at::IntArrayRef sizes) {
  std::string s;
  for (std::size_t i = 0; i < sizes.size(); ++i) s += (i ? "x" : "") + std::to_string(sizes[i]);
  return s.empty() ? "a scalar" : s;
}

// One intra-op thread for LibTorch and for the OpenBLAS it calls: the engine's workers are the
// parallelism. OpenBLAS is reached through LibTorch, so its setter is looked up, not linked.
void use_one_thread() {
  static std::once_flag once;
  std::call_once(once, [] {
    at::set_num_threads(1);
    try {
      at::set_num_interop_threads(1);
    } catch (const c10::Error&) {  // already set (a second plugin user in this process)
    }
    using SetThreads = void (*)(int);
    if (auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) {
      set(1);
    }
  });
}

struct Param {
  std::size_t offset = 0;
  std::vector<std::int64_t> sizes;
  std::size_t numel = 0;
  bool weight = false;  // two or more dimensions: what --l2 penalises
};

class TorchScriptWorkspace final : public Workspace {
 public:
  TorchScriptWorkspace(torch::jit::Module m, int max) : module(std::move(m)), max_batch(max) {
    for (const auto& p : module.parameters()) params.push_back(p);
  }
  torch::jit::Module module;
  std::vector<at::Tensor> params;
  int max_batch;
};

class TorchScriptModel final : public Model {
 public:
  TorchScriptModel(torch::jit::Module module, const TorchScriptRequest& r)
      : module_(std::move(module)), input_(r.input), classes_(r.classes), l2_(r.l2) {
    for (const auto& p : module_.named_parameters()) {
      const auto& t = p.value;
      params_.push_back(
          {total_, t.sizes().vec(), static_cast<std::size_t>(t.numel()), t.dim() >= 2});
      total_ += params_.back().numel;
    }
    initial_.resize(total_);
    copy_out(module_.parameters(), initial_);
    describe_ = "torchscript(" + std::filesystem::path(r.path).filename().string() + ", " +
                std::to_string(total_) + " parameters)";
  }

  std::string describe() const override { return describe_; }
  std::size_t num_params() const override { return total_; }

  // The file's own weights: a TorchScript model starts where its export left it (the seed
  // still drives sampling and delays).
  void init_params(std::span<float> w, std::uint64_t /*seed*/) const override {
    std::copy(initial_.begin(), initial_.end(), w.begin());
  }

  std::unique_ptr<Workspace> make_workspace(int max_batch) const override {
    std::lock_guard lock(clone_mutex_);  // clone() reads the shared module's tensors
    auto clone = module_.clone();
    clone.train(false);  // no dropout / batch-norm updates: a gradient is a function of w
    return std::make_unique<TorchScriptWorkspace>(std::move(clone), max_batch);
  }

  std::optional<float> loss_and_gradient(std::span<const float> w, const Batch& batch,
                                         std::span<float> grad, Workspace& workspace,
                                         const std::atomic<bool>* cancel) const override {
    use_one_thread();
    auto& ws = static_cast<TorchScriptWorkspace&>(workspace);
    if (cancel && cancel->load(std::memory_order_relaxed)) return std::nullopt;
    load(w, ws);
    at::Tensor loss = at::cross_entropy_loss(logits(ws, batch), labels(batch));
    if (l2_ > 0.0f) loss = loss + penalty_tensor(ws);
    if (cancel && cancel->load(std::memory_order_relaxed)) return std::nullopt;
    const auto grads = torch::autograd::grad({loss}, ws.params, {}, false, false, true);
    for (std::size_t i = 0; i < params_.size(); ++i) {
      float* out = grad.data() + params_[i].offset;
      if (!grads[i].defined()) {  // a parameter forward does not use
        std::fill(out, out + params_[i].numel, 0.0f);
      } else {
        const at::Tensor g = grads[i].contiguous();
        std::memcpy(out, g.data_ptr<float>(), params_[i].numel * sizeof(float));
      }
    }
    return loss.item<float>();
  }

  double l2_penalty(std::span<const float> w) const override {
    if (l2_ == 0.0f) return 0.0;
    double sum = 0.0;
    for (const auto& p : params_) {
      if (!p.weight) continue;
      for (std::size_t i = 0; i < p.numel; ++i) sum += double(w[p.offset + i]) * w[p.offset + i];
    }
    return 0.5 * l2_ * sum;
  }

  EvalSums evaluate_sums(std::span<const float> w, const Split& data, std::size_t first,
                         std::size_t count, Workspace& workspace) const override {
    use_one_thread();
    auto& ws = static_cast<TorchScriptWorkspace&>(workspace);
    c10::InferenceMode inference;
    load(w, ws);
    EvalSums sums;
    for (std::size_t done = 0; done < count;) {
      const auto n = static_cast<int>(std::min<std::size_t>(ws.max_batch, count - done));
      const Batch b{data.sample(first + done), data.labels.data() + first + done, n};
      const at::Tensor out = logits(ws, b);
      const at::Tensor y = labels(b);
      sums.loss += at::cross_entropy_loss(out, y, {}, at::Reduction::Sum).item<double>();
      sums.errors += static_cast<std::size_t>(out.argmax(1).ne(y).sum().item<std::int64_t>());
      done += static_cast<std::size_t>(n);
    }
    return sums;
  }

  // Runs forward once on zeros: the module must take this data set's batches and return
  // finite logits, one row of `classes` per sample. Empty when it does.
  std::string probe() const {
    auto ws = make_workspace(2);
    auto& tw = static_cast<TorchScriptWorkspace&>(*ws);
    c10::InferenceMode inference;
    const std::vector<float> x(2 * input_.dim(), 0.0f);
    const std::vector<std::uint8_t> y(2, 0);
    const std::string in = "2x" + std::to_string(input_.channels) + "x" +
                           std::to_string(input_.height) + "x" + std::to_string(input_.width);
    c10::IValue out;
    try {
      out = tw.module.forward({batch_tensor({x.data(), y.data(), 2})});
    } catch (const std::exception& e) {
      return "its forward fails on a " + in + " batch of this data set: " + first_line(e.what());
    }
    if (!out.isTensor()) {
      return "its forward returns " + out.tagKind() + ", not a tensor of logits";
    }
    const at::Tensor t = out.toTensor();
    if (t.dim() != 2 || t.size(0) != 2 || t.size(1) != classes_) {
      return "its forward maps a " + in + " batch to " + shape_text(t.sizes()) + ", not 2x" +
             std::to_string(classes_) + " (one logit per class of this data set)";
    }
    if (t.scalar_type() != at::kFloat) {
      return "its forward returns " + std::string(c10::toString(t.scalar_type())) +
             " logits, not float32; export it with module.float()";
    }
    if (!t.isfinite().all().item<bool>()) {
      return "its forward returns non-finite logits at the file's weights";
    }
    return {};
  }

 private:
  at::Tensor batch_tensor(const Batch& b) const {
    return at::from_blob(const_cast<float*>(b.features),
                         {b.size, input_.channels, input_.height, input_.width}, at::kFloat);
  }

  static at::Tensor labels(const Batch& b) {
    return at::from_blob(const_cast<std::uint8_t*>(b.labels), {b.size}, at::kByte).to(at::kLong);
  }

  at::Tensor logits(TorchScriptWorkspace& ws, const Batch& b) const {
    return ws.module.forward({batch_tensor(b)}).toTensor();
  }

  at::Tensor penalty_tensor(const TorchScriptWorkspace& ws) const {
    at::Tensor sum = at::zeros({}, at::kFloat);
    for (std::size_t i = 0; i < params_.size(); ++i) {
      if (params_[i].weight) sum = sum + ws.params[i].pow(2).sum();
    }
    return sum * (0.5f * l2_);
  }

  // w -> the workspace's parameter tensors (no autograd record of the copy).
  void load(std::span<const float> w, TorchScriptWorkspace& ws) const {
    at::NoGradGuard no_grad;
    for (std::size_t i = 0; i < params_.size(); ++i) {
      std::memcpy(ws.params[i].data_ptr<float>(), w.data() + params_[i].offset,
                  params_[i].numel * sizeof(float));
    }
  }

  template <class Params>
  void copy_out(Params params, std::span<float> w) const {
    std::size_t i = 0;
    for (const auto& p : params) {
      const at::Tensor c = p.contiguous();
      std::memcpy(w.data() + params_[i].offset, c.data_ptr<float>(),
                  params_[i].numel * sizeof(float));
      ++i;
    }
  }

  torch::jit::Module module_;
  ImageShape input_;
  int classes_;
  float l2_;
  std::vector<Param> params_;
  std::size_t total_ = 0;
  std::vector<float> initial_;
  std::string describe_;
  mutable std::mutex clone_mutex_;
};

// Loads and checks the file; the module's parameters must be float32 and contiguous, since the
// workspace writes the flat vector straight into their storage.
Model* make(const TorchScriptRequest& r, std::string& error) {
  use_one_thread();
  torch::jit::Module module;
  try {
    module = torch::jit::load(r.path);
  } catch (const std::exception& e) {
    error = "'" + r.path + "' is not a TorchScript file (" + first_line(e.what()) +
            "); write one with torch.jit.script(model).save(path), e.g. tools/export_model.py";
    return nullptr;
  }
  std::size_t count = 0;
  for (const auto& p : module.named_parameters()) {
    ++count;
    if (p.value.scalar_type() != at::kFloat || !p.value.is_contiguous()) {
      error = "'" + r.path + "': parameter " + p.name + " is " +
              std::string(c10::toString(p.value.scalar_type())) +
              (p.value.is_contiguous() ? "" : " and not contiguous") +
              "; export the module with module.float() before scripting";
      return nullptr;
    }
    p.value.set_requires_grad(true);
  }
  if (count == 0) {
    error = "'" + r.path + "' has no parameters to train";
    return nullptr;
  }
  auto model = std::make_unique<TorchScriptModel>(std::move(module), r);
  if (auto problem = model->probe(); !problem.empty()) {
    error = "'" + r.path + "': " + problem;
    return nullptr;
  }
  return model.release();
}

}  // namespace
}  // namespace stalesgd::model

extern "C" __attribute__((visibility("default"))) stalesgd::Model* stalesgd_make_torchscript_model(
    const stalesgd::model::TorchScriptRequest& request, std::string& error) {
  if (request.abi != stalesgd::model::kTorchScriptAbi) {
    error = "the TorchScript plugin was built for another version of stalesgd; rebuild it";
    return nullptr;
  }
  try {
    return stalesgd::model::make(request, error);
  } catch (const std::exception& e) {
    error = "'" + request.path + "': " + stalesgd::model::first_line(e.what());
    return nullptr;
  }
}

// The LibTorch this plugin was built against, for a run's provenance (docs/outputs.md).
extern "C" __attribute__((visibility("default"))) const char* stalesgd_torchscript_libtorch() {
  return TORCH_VERSION;
}
