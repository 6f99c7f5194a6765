// `stalesgd calibrate`: measures the machine model's numbers for a model on this machine (C,
// the server's time per gradient and per update) and writes the machine file that `theory` and
// `train --clock virtual` take as --machine (docs/machine.md).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/flag_parsing.hpp"
#include "stalesgd/data/catalog.hpp"
#include "stalesgd/engine/calibrate.hpp"
#include "stalesgd/straggler/duration.hpp"
#include "util/host_info.hpp"

namespace stalesgd::cli {

int calibrate_command(int argc, char** argv) {
  cxxopts::Options options("stalesgd calibrate",
                           "Measure a model's gradient time C and the server's time per gradient "
                           "and per update on this\nmachine, into a machine file for theory and "
                           "train --clock virtual (--machine FILE).\nDocs: docs/machine.md.");
  // The model and data flags are train's (the option table), so their values read the same.
  const std::vector<std::string> taken{"model", "hidden", "dataset", "data-dir", "batch", "seed"};
  add_train_flags(options, taken);
  // clang-format off
  options.add_options()
      ("out", "The machine file to write (JSON)", cxxopts::value<std::string>())
      ("budget", "About how long to measure", cxxopts::value<std::string>()->default_value("2s"))
      ("h,help", "Show this help");
  // clang-format on
  add_logging_options(options);
  try {
    auto r = parse(options, argc, argv);
    if (auto done = help_or_logging(options, r)) return *done;
    if (!r.count("out")) return usage_error("calibrate", "--out FILE is required");
    if (!r.count("model")) return usage_error("calibrate", "--model M is required");
    TrainerOptions o;
    if (auto s = set_train_flags(r, taken, o); !s) return fail(s.error().message, 2);
    if (!is_model_name(o.model.name)) return fail(unknown_model_message(o.model.name), 2);
    o.model = with_defaults(o.model);
    const auto budget = parse_duration(r["budget"].as<std::string>());
    if (!budget || !(*budget > 0.0)) {
      return fail(fmt::format("--budget '{}' must be a positive duration such as 2s",
                              r["budget"].as<std::string>()),
                  2);
    }
    const auto data = load_dataset(o.dataset, o.data_dir);
    if (!data) return fail(data.error().message);
    auto machine = calibrate(o, *data, *budget);
    if (!machine) return fail(machine.error().message);
    const HostInfo host = host_info();
    nlohmann::json how{{"dataset", data->name}, {"batch", o.batch},    {"host", host.name},
                       {"cpu", host.cpu},       {"cores", host.cores}, {"budget_s", *budget}};
    const std::string out = r["out"].as<std::string>();
    if (auto s = write_machine_file(out, *machine, how.dump()); !s) {
      return fail(fmt::format("--out {}: {}", out, s.error().message));
    }
    fmt::print("{:<22}{} ({} parameters) on {}, batch {}\n", "model", machine->model,
               machine->parameters, data->name, o.batch);
    fmt::print("{:<22}{:.1f} us\n", "C (one gradient)", machine->compute_s * 1e6);
    fmt::print("{:<22}{:.1f} us per gradient, {:.1f} us per update\n", "server",
               machine->server_gradient_s * 1e6, machine->server_update_s * 1e6);
    fmt::print("{:<22}{}\n", "machine file", out);
    return 0;
  } catch (const cxxopts::exceptions::exception& e) {
    return usage_error("calibrate", e);
  }
}

}  // namespace stalesgd::cli
