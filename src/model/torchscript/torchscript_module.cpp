// Loading a user's TorchScript file (torchscript_layout.hpp): what a file that does not load
// holds, whether a module's forward draws random numbers, and LibTorch's one thread.
#include <dlfcn.h>

#include <ATen/core/ivalue.h>
// clang-format off
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/script.h>

#include <ATen/Parallel.h>
#include <caffe2/serialize/inline_container.h>
// clang-format on

#include "model/torchscript/torchscript_errors.hpp"
#include "model/torchscript/torchscript_layout.hpp"

#include <mutex>
#include <string_view>

namespace stalesgd::model {
namespace {

// What a file that torch::jit::load refuses holds, when it can tell: a zip of pickled tensors
// without code is torch.save's (a state_dict), not a scripted module.
std::string load_failure(const std::string& path, const std::exception& e) {
  try {
    caffe2::serialize::PyTorchStreamReader reader(path);
    bool code = false;
    for (const auto& record : reader.getAllRecords()) code = code || record.starts_with("code/");
    if (!code && reader.hasRecord("data.pkl")) {
      return "'" + path +
             "' holds pickled tensors (torch.save, e.g. a state_dict), not a scripted module; "
             "save the module itself: torch.jit.script(model).save(path) (its weights come "
             "along; stalesgd export writes trained weights back into it)";
    }
  } catch (const std::exception&) {  // not a zip archive at all
  }
  return "'" + path + "' is not a TorchScript file (" + summary_line(message_of(e)) +
         "); write one with torch.jit.script(model).save(path), e.g. tools/export_model.py";
}

bool draws(const torch::jit::Block* block) {
  for (const torch::jit::Node* n : block->nodes()) {
    const std::string kind = n->kind().toQualString();
    if (kind.find("dropout") != std::string::npos || kind.find("bernoulli") != std::string::npos ||
        kind.starts_with("aten::rand") || kind.find("normal") != std::string::npos ||
        kind.find("uniform") != std::string::npos ||
        kind.find("multinomial") != std::string::npos || kind.find("rrelu") != std::string::npos) {
      return true;
    }
    for (const torch::jit::Block* b : n->blocks()) {
      if (draws(b)) return true;
    }
  }
  return false;
}

// The builtins through which TorchScript code reaches the file system (every registered
// operator with a file name argument: torch._C._jit_get_all_schemas() lists these two).
constexpr std::string_view kFileOps[] = {"aten::from_file", "aten::save"};

// The first file-touching builtin in `block` or the blocks nested in it, or "".
std::string file_op(const torch::jit::Block* block) {
  for (const torch::jit::Node* n : block->nodes()) {
    const std::string kind = n->kind().toQualString();
    for (const std::string_view op : kFileOps) {
      if (kind == op) return kind;
    }
    for (const torch::jit::Block* b : n->blocks()) {
      if (auto op = file_op(b); !op.empty()) return op;
    }
  }
  return {};
}

std::string refusal(const std::string& path, const std::string& where, const std::string& op) {
  return "'" + path + "': " + where + " calls " + op +
         ", which reads or writes files: a model's code runs with your rights, and stalesgd "
         "refuses one that touches files (docs/models.md, \"A module is code\"); remove the "
         "call and save it again";
}

// Before loading, for torch::jit::load runs code itself (a class's __setstate__): the code
// records' text, spaces removed so that spacing cannot hide a call, searched for the builtins
// by any spelling the TorchScript compiler resolves them from (torch.save, torch.ops.aten.save).
// A string or a name that merely contains one refuses too: the check errs on the safe side.
std::string code_touches_files(const std::string& path) {
  try {
    caffe2::serialize::PyTorchStreamReader reader(path);
    for (const auto& record : reader.getAllRecords()) {
      if (!record.ends_with(".py")) continue;
      auto [data, size] = reader.getRecord(record);
      std::string text;
      text.reserve(size);
      for (const char c : std::string_view(static_cast<const char*>(data.get()), size)) {
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\\') text += c;
      }
      for (const char* spelling : {"from_file", "torch.save(", "aten.save"}) {
        if (text.find(spelling) != std::string::npos) {
          return refusal(
              path, "its code (" + record + ")",
              spelling == std::string_view("from_file") ? "aten::from_file" : "aten::save");
        }
      }
    }
  } catch (const std::exception&) {  // not a zip: torch::jit::load says what it is
  }
  return {};
}

// "" when no method of the module or its submodules calls a file-touching builtin; else the
// refusal. Each method's graph is inlined, so functions and methods it calls are searched too.
std::string touches_files(const torch::jit::Module& module, const std::string& path) {
  for (const auto& m : module.modules()) {
    for (const auto& method : m.get_methods()) {
      auto graph = method.graph()->copy();
      torch::jit::Inline(*graph);
      if (auto op = file_op(graph->block()); !op.empty()) {
        const auto type = m.type()->name();
        return refusal(
            path,
            "its method " + (type ? type->name() : std::string("module")) + "." + method.name(),
            op);
      }
    }
  }
  return {};
}

}  // namespace

// One intra-op thread for LibTorch and for the OpenBLAS it calls: the engine's workers are the
// parallelism. OpenBLAS is reached through LibTorch, so its setter is looked up, not linked.
// LibTorch's OpenMP keeps the thread count per calling thread: a thread that calls the model
// first (an evaluator's oneTBB worker) would otherwise open a team of one thread per core, so
// each calling thread sets it once too.
void use_one_thread() {
  thread_local bool this_thread = false;
  if (!this_thread) {
    at::set_num_threads(1);
    this_thread = true;
  }
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

bool forward_draws(const torch::jit::Module& m) {
  auto graph = m.get_method("forward").graph()->copy();
  torch::jit::Inline(*graph);
  return draws(graph->block());
}

// Loads a scripted module for training or export: its parameters require gradients; an empty
// module with `error` set when it does not load.
torch::jit::Module load_module(const std::string& path, Layout& layout, std::string& error) {
  torch::jit::Module module;
  if (error = code_touches_files(path); !error.empty()) return {};
  try {
    module = torch::jit::load(path);
  } catch (const std::exception& e) {
    error = load_failure(path, e);
    return {};
  }
  if (error = touches_files(module, path); !error.empty()) return {};
  if (auto problem = read_layout(module, layout); !problem.empty()) {
    error = "'" + path + "': " + problem;
    return {};
  }
  for (const auto& p : module.parameters()) p.set_requires_grad(true);
  return module;
}

}  // namespace stalesgd::model
