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
  try {
    module = torch::jit::load(path);
  } catch (const std::exception& e) {
    error = load_failure(path, e);
    return {};
  }
  if (auto problem = read_layout(module, layout); !problem.empty()) {
    error = "'" + path + "': " + problem;
    return {};
  }
  for (const auto& p : module.parameters()) p.set_requires_grad(true);
  return module;
}

}  // namespace stalesgd::model
