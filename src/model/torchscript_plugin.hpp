// The contract between the engine library and its TorchScript plugin
// (libstalesgd_torchscript.so, src/model/torchscript/). LibTorch takes about a second to load
// into a process, so the library does not link it: `--model torchscript:PATH` dlopens the plugin,
// which does, on first use (docs/models.md, "TorchScript models"). Both sides are built from
// this header by one build, so the call passes C++ types; `abi` catches a stale plugin.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "stalesgd/model/model.hpp"

namespace stalesgd::model {

inline constexpr int kTorchScriptAbi = 2;
inline constexpr const char* kTorchScriptSymbol = "stalesgd_make_torchscript_model";
inline constexpr const char* kTorchScriptExportSymbol = "stalesgd_export_torchscript";
// const char* (): the LibTorch version the plugin was built against.
inline constexpr const char* kTorchScriptVersionSymbol = "stalesgd_torchscript_libtorch";
inline constexpr const char* kTorchScriptPluginFile = "libstalesgd_torchscript.so";

struct TorchScriptRequest {
  int abi = kTorchScriptAbi;
  std::string path;  // the scripted module's file
  ImageShape input;  // one sample's shape: the module gets N x C x H x W floats
  int classes = 0;   // the logits it must return per sample
  float l2 = 0.0f;   // lambda/2 * ||W||^2 over parameters of two or more dimensions
};

// Returns the model, or null with `error` set to one line naming the problem and the fix.
using MakeTorchScriptModel = Model* (*)(const TorchScriptRequest& request, std::string& error);

// `stalesgd export`: a run's flat vector written back into a module (docs/models.md, "Weights
// back into PyTorch").
struct TorchScriptExport {
  int abi = kTorchScriptAbi;
  std::string trained;       // the module the run trained: it gives the flat vector's layout
  std::string into;          // the module to write into: `trained` itself, or one whose
                             // parameters and buffers have the same names and shapes
  std::span<const float> w;  // the flat vector (train --save-model)
};
struct TorchScriptExported {
  std::string module;      // `into` with the values, as a TorchScript file's bytes
  std::string state_dict;  // {name: tensor} for torch.load, then nn.Module.load_state_dict
};
// True with `out` filled, or false with `error` set to one line.
using ExportTorchScript = bool (*)(const TorchScriptExport& request, TorchScriptExported& out,
                                   std::string& error);

}  // namespace stalesgd::model
