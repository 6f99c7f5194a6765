// A TorchScript module's flat vector: parameters, then buffers (torchscript_layout.hpp).
#include "model/torchscript/torchscript_layout.hpp"

#include <cstring>

namespace stalesgd::model {
namespace {

// Buffer types with a float value: floats (float32 exactly) and integers (exact below 2^24,
// which num_batches_tracked stays under for 16 million steps).
bool has_float_value(at::ScalarType t) {
  return at::isFloatingType(t) || at::isIntegralType(t, /*includeBool=*/true);
}

LayoutEntry entry(const std::string& name, const at::Tensor& t, std::size_t offset) {
  return {
      name,        offset, static_cast<std::size_t>(t.numel()), t.sizes().vec(), t.scalar_type(),
      t.dim() >= 2};
}

}  // namespace

std::string sizes_text(at::IntArrayRef sizes) {
  if (sizes.empty()) return "a scalar";
  std::string s;
  for (std::size_t i = 0; i < sizes.size(); ++i) s += (i ? " x " : "") + std::to_string(sizes[i]);
  return "a " + s + " tensor";
}

std::string read_layout(const torch::jit::Module& module, Layout& layout) {
  layout = {};
  for (const auto& p : module.named_parameters()) {
    if (p.value.scalar_type() != at::kFloat || !p.value.is_contiguous()) {
      return "parameter " + p.name + " is " + std::string(c10::toString(p.value.scalar_type())) +
             (p.value.is_contiguous() ? "" : " and not contiguous") +
             "; export the module with module.float() before scripting";
    }
    layout.params.push_back(entry(p.name, p.value, layout.total));
    layout.total += layout.params.back().numel;
  }
  const std::size_t trained = layout.total;
  for (const auto& b : module.named_buffers()) {
    if (!has_float_value(b.value.scalar_type())) {
      return "buffer " + b.name + " is " + std::string(c10::toString(b.value.scalar_type())) +
             ", which has no float value for the server to keep; register it as float32";
    }
    layout.buffers.push_back(entry(b.name, b.value, layout.total));
    layout.total += layout.buffers.back().numel;
  }
  layout.state = layout.total - trained;
  return {};
}

void copy_in(const Layout& layout, std::span<const float> w, const std::vector<at::Tensor>& params,
             const std::vector<at::Tensor>& buffers) {
  at::NoGradGuard no_grad;
  for (std::size_t i = 0; i < layout.params.size(); ++i) {
    const auto& e = layout.params[i];
    std::memcpy(params[i].data_ptr<float>(), w.data() + e.offset, e.numel * sizeof(float));
  }
  for (std::size_t i = 0; i < layout.buffers.size(); ++i) {
    const auto& e = layout.buffers[i];
    const at::Tensor& b = buffers[i];
    if (e.type == at::kFloat && b.is_contiguous()) {
      std::memcpy(b.data_ptr<float>(), w.data() + e.offset, e.numel * sizeof(float));
    } else {
      b.copy_(at::from_blob(const_cast<float*>(w.data() + e.offset), e.sizes, at::kFloat));
    }
  }
}

void copy_buffers_out(const Layout& layout, const std::vector<at::Tensor>& buffers,
                      std::span<float> state) {
  const std::size_t first = layout.total - layout.state;
  for (std::size_t i = 0; i < layout.buffers.size(); ++i) {
    const auto& e = layout.buffers[i];
    const at::Tensor c = buffers[i].to(at::kFloat).contiguous();
    std::memcpy(state.data() + (e.offset - first), c.data_ptr<float>(), e.numel * sizeof(float));
  }
}

void copy_out(const Layout& layout, const std::vector<at::Tensor>& params,
              const std::vector<at::Tensor>& buffers, std::span<float> w) {
  for (std::size_t i = 0; i < layout.params.size(); ++i) {
    const auto& e = layout.params[i];
    const at::Tensor c = params[i].detach().contiguous();
    std::memcpy(w.data() + e.offset, c.data_ptr<float>(), e.numel * sizeof(float));
  }
  copy_buffers_out(layout, buffers, w.subspan(layout.total - layout.state));
}

}  // namespace stalesgd::model
