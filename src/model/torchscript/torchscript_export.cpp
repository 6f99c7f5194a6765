// `stalesgd export`, the plugin's half: a run's flat vector into a scripted module and a
// state_dict (torchscript_plugin.hpp, TorchScriptExport). The values go by name: the module
// written into may be another file than the one trained, as long as its parameters and buffers
// have the trained module's names and shapes.
#include <ATen/core/ivalue.h>
// clang-format off
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/script.h>
// clang-format on

#include <map>
#include <sstream>

#include "model/torchscript/torchscript_errors.hpp"
#include "model/torchscript/torchscript_layout.hpp"
#include "model/torchscript_plugin.hpp"

namespace stalesgd::model {
namespace {

using Entries = std::map<std::string, const LayoutEntry*>;

Entries by_name(const std::vector<LayoutEntry>& entries) {
  Entries out;
  for (const auto& e : entries) out.emplace(e.name, &e);
  return out;
}

// One line naming the first difference between the two modules' entries of one kind.
std::string compare(const std::vector<LayoutEntry>& trained, const std::vector<LayoutEntry>& into,
                    const char* kind, const std::string& into_path) {
  const Entries have = by_name(into);
  for (const auto& e : trained) {
    const auto it = have.find(e.name);
    if (it == have.end()) {
      return "'" + into_path + "' has no " + kind + " '" + e.name +
             "', which the trained module has; export into the module the run trained, or one "
             "with its names";
    }
    if (it->second->sizes != e.sizes) {
      return "'" + into_path + "': " + kind + " '" + e.name + "' is " +
             sizes_text(it->second->sizes) + " there but " + sizes_text(e.sizes) +
             " in the trained module";
    }
  }
  const Entries trained_names = by_name(trained);
  for (const auto& e : into) {
    if (!trained_names.count(e.name)) {
      return "'" + into_path + "' has a " + kind + " '" + e.name +
             "' that the trained module lacks; export into the module the run trained, or one "
             "with its names";
    }
  }
  return {};
}

bool export_into(const TorchScriptExport& r, TorchScriptExported& out, std::string& error) {
  Layout layout;
  torch::jit::Module trained = load_module(r.trained, layout, error);
  if (!error.empty()) return false;
  if (r.w.size() != layout.total) {
    error = "the parameters hold " + std::to_string(r.w.size()) + " floats but '" + r.trained +
            "' lays out " + std::to_string(layout.total) + " (" +
            std::to_string(layout.total - layout.state) + " parameters and " +
            std::to_string(layout.state) +
            " buffer values); give the file train --save-model wrote for this module";
    return false;
  }
  const std::string into_path = r.into.empty() ? r.trained : r.into;
  Layout target = layout;
  torch::jit::Module into = r.into.empty() ? trained : load_module(r.into, target, error);
  if (!error.empty()) return false;
  for (const auto& [a, b, kind] : {std::tuple{&layout.params, &target.params, "parameter"},
                                   std::tuple{&layout.buffers, &target.buffers, "buffer"}}) {
    if (auto problem = compare(*a, *b, kind, into_path); !problem.empty()) {
      error = problem;
      return false;
    }
  }
  const Entries params = by_name(layout.params), buffers = by_name(layout.buffers);
  c10::Dict<std::string, at::Tensor> dict;
  {
    at::NoGradGuard no_grad;
    const auto values = [&](const LayoutEntry& e) {
      return at::from_blob(const_cast<float*>(r.w.data() + e.offset), e.sizes, at::kFloat);
    };
    for (const auto& p : into.named_parameters()) {
      p.value.copy_(values(*params.at(p.name)));
      dict.insert(p.name, p.value.detach().clone());
    }
    for (const auto& b : into.named_buffers()) {
      b.value.copy_(values(*buffers.at(b.name)));
      dict.insert(b.name, b.value.clone());
    }
  }
  std::ostringstream module_bytes;
  into.save(module_bytes);
  out.module = module_bytes.str();
  const std::vector<char> pickled = torch::jit::pickle_save(c10::IValue(dict));
  out.state_dict.assign(pickled.begin(), pickled.end());
  return true;
}

}  // namespace
}  // namespace stalesgd::model

extern "C" __attribute__((visibility("default"))) bool stalesgd_export_torchscript(
    const stalesgd::model::TorchScriptExport& request, stalesgd::model::TorchScriptExported& out,
    std::string& error) {
  if (request.abi != stalesgd::model::kTorchScriptAbi) {
    error = "the TorchScript plugin was built for another version of stalesgd; rebuild it";
    return false;
  }
  try {
    return stalesgd::model::export_into(request, out, error);
  } catch (const std::exception& e) {
    error = stalesgd::model::summary_line(stalesgd::model::message_of(e));
    return false;
  }
}
