// `stalesgd export`: a trained model's parameters and buffers (train --save-model) written back
// into the user's own TorchScript module, and as a state_dict any nn.Module with those names
// loads (docs/cli.md, docs/models.md "Weights back into PyTorch").
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/flag_parsing.hpp"
#include "model/architectures.hpp"
#include "output/model_file.hpp"
#include "util/atomic_file.hpp"

namespace stalesgd::cli {

int export_command(int argc, char** argv) {
  cxxopts::Options options(
      "stalesgd export",
      "Writes a trained TorchScript model (the .npy train --save-model wrote) back into its "
      "module: a TorchScript file for torch.jit.load and, with --state-dict, a state_dict for "
      "torch.load and nn.Module.load_state_dict.\nDocs: docs/cli.md, docs/models.md.");
  options.add_options()("model", "The module the run trained: torchscript:PATH",
                        cxxopts::value<std::string>())(
      "model-file", "The .npy file train --save-model wrote", cxxopts::value<std::string>())(
      "into",
      "The module to write the values into, by name (default: the --model file); its "
      "parameters and buffers must have the trained module's names and shapes",
      cxxopts::value<std::string>())("out", "The TorchScript file to write",
                                     cxxopts::value<std::string>())(
      "state-dict", "Also write the state_dict, {name: tensor}, to this file",
      cxxopts::value<std::string>());
  add_logging_options(options);
  options.add_options()("h,help", "Show this help");
  try {
    auto r = parse(options, argc, argv);
    if (auto done = help_or_logging(options, r)) return *done;
    for (const char* flag : {"model", "model-file", "out"}) {
      if (!r.count(flag)) return usage_error("export", fmt::format("--{} is required", flag));
    }
    const auto out = r["out"].as<std::string>();
    const auto state_dict = r.count("state-dict") ? r["state-dict"].as<std::string>() : "";
    // Before any work: a bad destination costs nothing.
    for (const auto& [flag, path] : {std::pair{"--out", out}, {"--state-dict", state_dict}}) {
      if (path.empty()) continue;
      if (auto s = check_model_path(path, flag); !s) return fail(s.error().message, 2);
    }
    const auto params = read_model_file(r["model-file"].as<std::string>(), kAnyCount);
    if (!params) return fail(params.error().message);
    const auto into = r.count("into") ? r["into"].as<std::string>() : "";
    const auto files = model::export_torchscript(r["model"].as<std::string>(), into, *params);
    if (!files) return fail(files.error().message);
    if (auto s = write_file_atomically(out, files->module); !s) return fail(s.error().message);
    fmt::print("wrote {}: the module with the trained parameters and buffers (torch.jit.load)\n",
               out);
    if (!state_dict.empty()) {
      if (auto s = write_file_atomically(state_dict, files->state_dict); !s) {
        return fail(s.error().message);
      }
      fmt::print("wrote {}: the state_dict (torch.load, then model.load_state_dict)\n", state_dict);
    }
    return 0;
  } catch (const cxxopts::exceptions::exception& e) {
    return usage_error("export", e);
  }
}

}  // namespace stalesgd::cli
