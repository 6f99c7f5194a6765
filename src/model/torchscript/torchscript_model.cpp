// The TorchScript plugin: a Model over a scripted nn.Module, computed with LibTorch. Built as
// libstalesgd_torchscript.so and loaded by src/model/torchscript.cpp (docs/models.md).
//
// The server owns the module's state as one flat vector, like every model's: its parameters,
// then its buffers (torchscript_layout.hpp). Each Workspace holds its own clone of the module,
// so that workers compute at once without sharing tensors. A training step copies the flat
// vector into the clone, runs forward in train mode (BatchNorm on the batch's statistics,
// Dropout drawing from the minibatch's seed), cross-entropy and autograd, and copies out the
// gradients and the buffers' change; evaluation runs in eval mode on the buffers it is given.
// LibTorch computes on the calling thread only (one intra-op thread).
// First: clang's C++20 std::vector needs c10::IValue complete where LibTorch 1.13's headers use
// it (the ASan build is clang's).
#include <ATen/core/ivalue.h>
// clang-format off
#include <torch/csrc/autograd/autograd.h>
#include <torch/script.h>
#include <torch/version.h>

#include <ATen/CPUGeneratorImpl.h>
// clang-format on

#include <cmath>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "model/torchscript/torchscript_errors.hpp"
#include "model/torchscript/torchscript_layout.hpp"
#include "model/torchscript_plugin.hpp"

namespace stalesgd::model {
namespace {

// A module whose forward draws random numbers (Dropout, RReLU, torch.rand...) draws them from
// LibTorch's one default CPU generator. Each training forward of such a module seeds it with
// its minibatch's seed under this lock, so that its masks depend on the minibatch alone, not on
// which other worker drew in between: a virtual-clock run is byte-identical, and a P = 1 run
// draws the masks PyTorch draws after torch.manual_seed(seed >> 1) (docs/models.md). The cost
// is that the forwards of such a module do not overlap (their backwards do).
std::mutex& draw_mutex() {
  static std::mutex mu;
  return mu;
}

template <class List>
std::vector<at::Tensor> tensors(const List& list) {
  std::vector<at::Tensor> out;
  for (const auto& t : list) out.push_back(t);
  return out;
}

// A LibTorch failure inside the user's module: one line naming it, the whole text for run.log.
[[noreturn]] void throw_model_error(const std::string& what, const std::exception& e) {
  const std::string text = message_of(e);
  throw ModelError(what + ": " + summary_line(text), text);
}

class TorchScriptWorkspace final : public Workspace {
 public:
  TorchScriptWorkspace(torch::jit::Module m, int max) : module(std::move(m)), max_batch(max) {
    for (const auto& p : module.parameters()) params.push_back(p);
  }
  torch::jit::Module module;
  std::vector<at::Tensor> params;
  int max_batch;
  bool training = false;  // the clone's mode now

  void mode(bool train) {
    if (training == train) return;
    module.train(train);
    training = train;
  }
};

class TorchScriptModel final : public Model {
 public:
  TorchScriptModel(torch::jit::Module module, Layout layout, const TorchScriptRequest& r)
      : module_(std::move(module)),
        layout_(std::move(layout)),
        input_(r.input),
        classes_(r.classes),
        l2_(r.l2),
        draws_(forward_draws(module_)) {
    initial_.resize(layout_.total);
    copy_out(layout_, tensors(module_.parameters()), tensors(module_.buffers()), initial_);
    describe_ = "torchscript(" + std::filesystem::path(r.path).filename().string() + ", " +
                std::to_string(layout_.total - layout_.state) + " parameters" +
                (layout_.state ? ", " + std::to_string(layout_.state) + " buffer values" : "") +
                ")";
  }

  std::string describe() const override { return describe_; }
  std::size_t num_params() const override { return layout_.total; }
  std::size_t num_state() const override { return layout_.state; }

  // The file's own weights and buffers: a TorchScript model starts where its export left it
  // (the seed still drives sampling and delays).
  void init_params(std::span<float> w, std::uint64_t /*seed*/) const override {
    std::copy(initial_.begin(), initial_.end(), w.begin());
  }

  std::unique_ptr<Workspace> make_workspace(int max_batch) const override {
    std::lock_guard lock(clone_mutex_);  // clone() reads the shared module's tensors
    auto clone = module_.clone();
    clone.train(false);
    return std::make_unique<TorchScriptWorkspace>(std::move(clone), max_batch);
  }

  std::optional<float> loss_and_gradient(std::span<const float> w, const Batch& batch,
                                         std::span<float> grad, Workspace& workspace,
                                         const std::atomic<bool>* cancel) const override {
    use_one_thread();
    auto& ws = static_cast<TorchScriptWorkspace&>(workspace);
    if (cancel && cancel->load(std::memory_order_relaxed)) return std::nullopt;
    copy_in(layout_, w, ws.params, tensors(ws.module.buffers()));
    ws.mode(true);
    at::Tensor loss;
    try {
      loss = at::cross_entropy_loss(train_logits(ws, batch), labels(batch));
    } catch (const std::exception& e) {
      throw_model_error("its forward fails in train mode", e);
    }
    if (l2_ > 0.0f) loss = loss + penalty_tensor(ws);
    if (cancel && cancel->load(std::memory_order_relaxed)) return std::nullopt;
    std::vector<at::Tensor> grads;
    try {
      grads = torch::autograd::grad({loss}, ws.params, {}, false, false, true);
    } catch (const std::exception& e) {
      throw_model_error("its backward fails", e);
    }
    for (std::size_t i = 0; i < layout_.params.size(); ++i) {
      const auto& p = layout_.params[i];
      float* out = grad.data() + p.offset;
      if (!grads[i].defined()) {  // a parameter forward does not use
        std::fill(out, out + p.numel, 0.0f);
      } else {
        const at::Tensor g = grads[i].contiguous();
        std::memcpy(out, g.data_ptr<float>(), p.numel * sizeof(float));
      }
    }
    state_change(ws, w, grad);
    return loss.item<float>();
  }

  double l2_penalty(std::span<const float> w) const override {
    if (l2_ == 0.0f) return 0.0;
    double sum = 0.0;
    for (const auto& p : layout_.params) {
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
    copy_in(layout_, w, ws.params, tensors(ws.module.buffers()));
    ws.mode(false);
    EvalSums sums;
    for (std::size_t done = 0; done < count;) {
      const auto n = static_cast<int>(std::min<std::size_t>(ws.max_batch, count - done));
      const Batch b{data.sample(first + done), data.labels.data() + first + done, n};
      // The loss too, as in train mode: logits of another batch size fail there.
      try {
        const at::Tensor out = ws.module.forward({batch_tensor(b)}).toTensor();
        const at::Tensor y = labels(b);
        sums.loss += at::cross_entropy_loss(out, y, {}, at::Reduction::Sum).item<double>();
        sums.errors += static_cast<std::size_t>(out.argmax(1).ne(y).sum().item<std::int64_t>());
      } catch (const std::exception& e) {
        throw_model_error("its forward fails in eval mode", e);
      }
      done += static_cast<std::size_t>(n);
    }
    return sums;
  }

  // Runs forward once on zeros in eval mode, then a training step in train mode: the module
  // must take this data set's batches in both and return finite logits, one row of `classes`
  // per sample, and keep its buffers' shapes. Empty when it does.
  std::string probe() const {
    const std::string in = "2x" + std::to_string(input_.channels) + "x" +
                           std::to_string(input_.height) + "x" + std::to_string(input_.width);
    const std::vector<float> x(2 * input_.dim(), 0.0f);
    const std::vector<std::uint8_t> y(2, 0);
    const Batch b{x.data(), y.data(), 2};
    c10::IValue out;
    {
      auto ws = make_workspace(2);
      auto& tw = static_cast<TorchScriptWorkspace&>(*ws);
      c10::InferenceMode inference;
      try {
        out = tw.module.forward({batch_tensor(b)});
      } catch (const std::exception& e) {
        return "its forward fails on a " + in +
               " batch of this data set: " + summary_line(message_of(e));
      }
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
    auto ws = make_workspace(2);
    std::vector<float> grad(layout_.total);
    try {
      loss_and_gradient(initial_, b, grad, *ws, nullptr);
    } catch (const ModelError& e) {
      return std::string(e.what()) + " (on a " + in + " batch of this data set)";
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

  static std::string shape_text(at::IntArrayRef sizes) {
    std::string s;
    for (std::size_t i = 0; i < sizes.size(); ++i) s += (i ? "x" : "") + std::to_string(sizes[i]);
    return s.empty() ? "a scalar" : s;
  }

  // Train-mode logits; a module that draws does so from the minibatch's seed (draw_mutex).
  at::Tensor train_logits(TorchScriptWorkspace& ws, const Batch& b) const {
    if (!draws_) return ws.module.forward({batch_tensor(b)}).toTensor();
    std::lock_guard lock(draw_mutex());
    auto gen = at::detail::getDefaultCPUGenerator();
    {
      std::lock_guard gen_lock(gen.mutex());
      gen.set_current_seed(b.seed >> 1);  // PyTorch's manual_seed takes 63 bits
    }
    return ws.module.forward({batch_tensor(b)}).toTensor();
  }

  // The buffers' change over the step, old - new, into the gradient's state entries (the
  // server folds it with weight 1: Model::num_state). A buffer must keep its shape and type.
  void state_change(TorchScriptWorkspace& ws, std::span<const float> w,
                    std::span<float> grad) const {
    if (layout_.state == 0) return;
    const auto buffers = tensors(ws.module.buffers());
    for (std::size_t i = 0; i < layout_.buffers.size(); ++i) {
      const auto& e = layout_.buffers[i];
      if (i >= buffers.size() || buffers[i].sizes().vec() != e.sizes) {
        throw ModelError(
            "its buffer " + e.name + " changes shape in train mode, from " + sizes_text(e.sizes) +
                " to " + (i < buffers.size() ? sizes_text(buffers[i].sizes()) : "none") +
                "; stalesgd keeps a module's buffers in its flat vector, so each must keep "
                "the shape it was registered with",
            {});
      }
    }
    const std::size_t first = layout_.total - layout_.state;
    std::span<float> tail = grad.subspan(first);
    copy_buffers_out(layout_, buffers, tail);
    for (std::size_t i = 0; i < tail.size(); ++i) tail[i] = w[first + i] - tail[i];
  }

  at::Tensor penalty_tensor(const TorchScriptWorkspace& ws) const {
    at::Tensor sum = at::zeros({}, at::kFloat);
    for (std::size_t i = 0; i < layout_.params.size(); ++i) {
      if (layout_.params[i].weight) sum = sum + ws.params[i].pow(2).sum();
    }
    return sum * (0.5f * l2_);
  }

  torch::jit::Module module_;
  Layout layout_;
  ImageShape input_;
  int classes_;
  float l2_;
  bool draws_;
  std::vector<float> initial_;
  std::string describe_;
  mutable std::mutex clone_mutex_;
};

// Loads and checks the file; the module's parameters must be float32 and contiguous, since the
// workspace writes the flat vector straight into their storage.
Model* make(const TorchScriptRequest& r, std::string& error) {
  use_one_thread();
  Layout layout;
  torch::jit::Module module = load_module(r.path, layout, error);
  if (!error.empty()) return nullptr;
  if (layout.params.empty()) {
    error = "'" + r.path + "' has no parameters to train";
    return nullptr;
  }
  auto model = std::make_unique<TorchScriptModel>(std::move(module), std::move(layout), r);
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
    error =
        "'" + request.path + "': " + stalesgd::model::summary_line(stalesgd::model::message_of(e));
    return nullptr;
  }
}

// The LibTorch this plugin was built against, for a run's provenance (docs/outputs.md).
extern "C" __attribute__((visibility("default"))) const char* stalesgd_torchscript_libtorch() {
  return TORCH_VERSION;
}
