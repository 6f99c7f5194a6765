// `stalesgd calibrate`: measures the machine model's numbers for a model on this machine (C,
// the server's time per gradient and per update; under mpirun the link, from a ping-pong between
// ranks 0 and 1) and writes the machine file that `theory` and `train --clock virtual` take as
// --machine (docs/machine.md).
#include <sched.h>

#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/flag_parsing.hpp"
#include "engine/mpi/mpi_runtime.hpp"
#include "stalesgd/data/catalog.hpp"
#include "stalesgd/engine/calibrate.hpp"
#include "stalesgd/machine/ping_pong.hpp"
#include "stalesgd/model/model.hpp"
#include "stalesgd/straggler/duration.hpp"
#include "util/host_info.hpp"

namespace stalesgd::cli {
namespace {

// One float, then 16 times larger each step, up to the model's message (the size that matters).
std::vector<double> ping_pong_sizes(double message_bytes) {
  std::vector<double> sizes;
  for (double b = 4.0; b < message_bytes; b *= 16.0) sizes.push_back(b);
  sizes.push_back(message_bytes);
  return sizes;
}

// Under mpirun: the link from a ping-pong between ranks 0 and 1 up to `message_bytes` (rank
// 0's; the others pass 0), the curve into `how`. Collective: every rank calls it; the others
// get no link.
Result<Link> measure_link(double message_bytes, double budget_s, nlohmann::json& how) {
  auto curve = mpi::ping_pong(ping_pong_sizes(message_bytes), budget_s);
  if (!curve) return curve.error();
  if (!mpi::reports()) return Link{};
  const bool memory = curve->host == curve->peer_host;
  auto link = fit_link(curve->points, memory);
  if (!link) return link.error();
  how["ranks"] = mpi::ranks();
  how["hosts"] = {curve->host, curve->peer_host};
  for (const PingPongPoint& p : curve->points) {
    how["ping_pong"].push_back({{"bytes", p.bytes},
                                {"round_trip_s", p.round_trip_s},
                                {"fitted_round_trip_s", 2.0 * link->seconds(p.bytes)}});
  }
  return *link;
}

// mpirun binds a rank of a 2-rank job to one core: the threads that measure C and the cores'
// contention would share it. They measure the machine, so they may run on every core.
void use_every_core() {
  cpu_set_t all;
  CPU_ZERO(&all);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned c = 0; c < cores && c < CPU_SETSIZE; ++c) CPU_SET(c, &all);
  (void)sched_setaffinity(0, sizeof(all), &all);  // kept bound when refused: measured as is
}

}  // namespace

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
    const std::string out = r["out"].as<std::string>();
    // Rank 0 alone measures the model; under mpirun the other ranks only answer the ping-pong,
    // and learn first whether rank 0 can start it.
    Status ready;
    Result<Dataset> data = Error{""};
    if (mpi::reports()) {
      const auto folder = std::filesystem::path(out).parent_path();
      std::error_code ec;
      if (!folder.empty() && !std::filesystem::is_directory(folder, ec)) {
        ready = Error{fmt::format("--out {}: its folder {} does not exist", out, folder.string())};
      } else if (data = load_dataset(o.dataset, o.data_dir); !data) {
        ready = data.error();
      }
    }
    if (auto s = mpi::agree(ready); !s) return fail(s.error().message);
    const HostInfo host = host_info();
    nlohmann::json how{{"batch", o.batch},
                       {"host", host.name},
                       {"cpu", host.cpu},
                       {"cores", host.cores},
                       {"budget_s", *budget}};
    // The ping-pong first: afterwards the other ranks wait sleeping (in finalize) and leave the
    // cores to rank 0's measurements.
    Link link;
    if (mpi::active()) {
      double bytes = 0.0;
      if (mpi::reports()) {
        auto model = make_model(o.model, data->train.shape, data->num_classes);
        if (model) bytes = 4.0 * static_cast<double>((*model)->num_params());
      }
      auto measured = measure_link(bytes, *budget / 2.0, how);
      if (!measured) return fail(measured.error().message);
      if (!mpi::reports()) return 0;
      link = *measured;
      use_every_core();
    }
    auto machine = calibrate(o, *data, *budget);
    if (!machine) return fail(machine.error().message);
    machine->link = link;
    how["dataset"] = data->name;
    if (auto s = write_machine_file(out, *machine, how.dump()); !s) {
      return fail(fmt::format("--out {}: {}", out, s.error().message));
    }
    fmt::print("{:<22}{} ({} parameters) on {}, batch {}\n", "model", machine->model,
               machine->parameters, data->name, o.batch);
    fmt::print("{:<22}{:.1f} us\n", "C (one gradient)", machine->compute_s * 1e6);
    fmt::print("{:<22}{:.1f} us per gradient, {:.1f} us per update\n", "server",
               machine->server_gradient_s * 1e6, machine->server_update_s * 1e6);
    if (mpi::active()) {
      const Link& l = machine->link;
      const std::string bandwidth =
          l.bandwidth_bps > 0.0
              ? fmt::format("bandwidth {:.2f} Gbit/s", l.bandwidth_bps / 1e9)
              : "no bandwidth limit (the round trip did not grow with the message: a busy "
                "machine?)";
      fmt::print("{:<22}latency {:.1f} us, {}, {} (ping-pong {} to {})\n", "link",
                 l.latency_s * 1e6, bandwidth, l.memory ? "memory: one host" : "network",
                 how["hosts"][0].get<std::string>(), how["hosts"][1].get<std::string>());
    }
    fmt::print("{:<22}{}\n", "machine file", out);
    return 0;
  } catch (const cxxopts::exceptions::exception& e) {
    return usage_error("calibrate", e);
  }
}

}  // namespace stalesgd::cli
