// `stalesgd theory` on a machine other than the free one (docs/machine.md): the machine from
// --machine and the flags, --server-time auto measured for --model, the P at which each rule's
// server saturates, and what S server shards buy.
#include "cli/theory_machine.hpp"

#include <cmath>

#include <fmt/format.h>

#include "cli/flag_parsing.hpp"
#include "config/machine_options.hpp"
#include "stalesgd/data/catalog.hpp"
#include "stalesgd/engine/calibrate.hpp"
#include "stalesgd/model/model.hpp"
#include "stalesgd/rules/rule_registry.hpp"

namespace stalesgd::cli {
namespace {

constexpr double kSaturated = 0.9;  // server busy this share of the time
constexpr std::uint64_t kScanSamples = 2000;

}  // namespace

Status theory_machine_flags(const cxxopts::ParseResult& r, TheoryArgs& args) {
  TrainerOptions& o = args.machine;
  o.model.name.clear();  // no model unless given: a machine file's own is kept
  if (auto s = set_train_flags(r, kTheoryMachineFlags, o); !s) return s;
  if (r.count("model")) o.model.name = r["model"].as<std::string>();
  args.saturation_max = r["saturation-max"].as<int>();
  if (args.saturation_max < 1 || args.saturation_max > 4096) {
    return Error{
        fmt::format("--saturation-max {} is out of range; use 1 to 4096", args.saturation_max)};
  }
  return {};
}

Result<Machine> theory_machine(const TheoryArgs& args) {
  const TrainerOptions& o = args.machine;
  auto m = resolve_machine(o);
  if (!m) return m.error();
  const bool measure = o.server_time == "auto";
  const bool sized = m->parameters > 0;
  if ((measure || (!sized && m->link.bandwidth_bps > 0.0)) && o.model.name.empty()) {
    return Error{
        measure ? "--server-time auto measures the server for a model: give --model M"
                : "--link's bandwidth needs the size of a message: give --model M or --machine "
                  "FILE"};
  }
  if (o.model.name.empty()) return m;
  if (!is_model_name(o.model.name)) return Error{unknown_model_message(o.model.name)};
  auto data = load_dataset(o.dataset, o.data_dir);
  if (!data) return data.error();
  auto model = make_model(with_defaults(o.model), data->train.shape, data->num_classes);
  if (!model) return model.error();
  m->parameters = (*model)->num_params();
  if (m->model.empty()) m->model = o.model.name;
  if (measure) {
    auto t = measure_server_time(o, *data);
    if (!t) return t.error();
    m->server_gradient_s = t->gradient_s;
    m->server_update_s = t->update_s;
  }
  return m;
}

Result<nlohmann::json> server_rows(const RuleConfig& rule, const StragglerProfile& profile,
                                   const TheoryArgs& args, const Machine& machine) {
  nlohmann::json j;
  // The smallest P = 1, 2, 4, ... at which the server is busy 90% of the time.
  j["saturation_workers"] = nullptr;
  for (int p = 1; p <= args.saturation_max; p *= 2) {
    auto r = rule_at_workers(rule, p);
    if (!r) continue;  // a K the rule cannot take at this P
    auto scaled = StragglerProfile::parse(args.delay, p);
    if (!scaled) return scaled.error();
    auto mc = monte_carlo_runtime(*r, *scaled, kScanSamples, args.seed, args.delay_mode,
                                  machine.compute_s, machine);
    if (!mc) return mc.error();
    if (mc->server_utilization >= kSaturated) {
      j["saturation_workers"] = p;
      break;
    }
  }
  // Updates per second at this P with S shards.
  j["shards"] = nlohmann::json::array();
  double base = 0.0;
  for (int s : {1, 2, 4, 8, 16}) {
    Machine sharded = machine;
    sharded.shards = s;
    auto mc = monte_carlo_runtime(rule, profile, args.samples, args.seed, args.delay_mode,
                                  machine.compute_s, sharded);
    if (!mc) return mc.error();
    const double rate = 1.0 / mc->seconds;
    if (s == 1) base = rate;
    j["shards"].push_back({{"shards", s},
                           {"updates_per_s", rate},
                           {"speedup", rate / base},
                           {"server_utilization", mc->server_utilization}});
  }
  return j;
}

void print_server_table(const nlohmann::json& out) {
  fmt::print(
      "\nServer on {} (docs/machine.md): P at which the server is busy {:.0f}% of the "
      "time, and updates/s at P = {} with S shards\n",
      out["machine"]["describe"].get<std::string>(), 100 * kSaturated, out["workers"].get<int>());
  fmt::print("{:<14} {:>4}  {:>10}  {:>11}  {:>8}  {:>8}  {:>8}  {:>8}\n", "rule", "K", "saturates",
             "S=1 upd/s", "S=2", "S=4", "S=8", "S=16");
  for (const auto& c : out["rules"]) {
    const auto& srv = c["server"];
    const std::string sat = srv["saturation_workers"].is_null()
                                ? fmt::format("> {}", out["saturation_max"].get<int>())
                                : fmt::format("P = {}", srv["saturation_workers"].get<int>());
    fmt::print("{:<14} {:>4}  {:>10}  {:>11.1f}", c["rule"].get<std::string>(), c["k"].get<int>(),
               sat, srv["shards"][0]["updates_per_s"].get<double>());
    for (std::size_t i = 1; i < srv["shards"].size(); ++i) {
      fmt::print("  {:>7.2f}x", srv["shards"][i]["speedup"].get<double>());
    }
    fmt::print("\n");
  }
}

}  // namespace stalesgd::cli
