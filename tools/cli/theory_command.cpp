// `stalesgd theory`: the expected time per iteration of a rule under a delay spec, in closed
// form where the paper gives one and by Monte Carlo for every spec; E[T_sync] / E[T_async].
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/theory_machine.hpp"
#include "rules/reference_rules.hpp"
#include "stalesgd/rules/rule_registry.hpp"
#include "stalesgd/theory/runtime.hpp"

namespace stalesgd::cli {
namespace {

// One row: the closed form where there is one, and the Monte Carlo, whose error is the
// command's (run_theory checked --samples first, so only a failed allocation is left).
Result<nlohmann::json> cell(const RuleConfig& rule, const StragglerProfile& profile,
                            const TheoryArgs& args, const Machine& machine,
                            bool server_table = true) {
  nlohmann::json j;
  j["rule"] = rule.name();
  j["k"] = rule.k;
  // The rule's own options, under their keys as summary.json's config writes them.
  for (const auto& [name, value] : rule.params.values()) {
    std::string key = name;
    std::replace(key.begin(), key.end(), '-', '_');
    j[key] = std::visit([](const auto& v) { return nlohmann::json(v); }, value);
  }
  // The paper's closed forms are the free machine's, without compute time.
  const bool modelled = !machine.free() || machine.compute_s > 0.0;
  if (!modelled) {
    if (auto c = closed_form_runtime(rule, profile)) {
      j["closed_form"] = {{"seconds_per_iteration", c->seconds},
                          {"formula", c->formula},
                          {"upper_bound", c->upper_bound}};
    }
  }
  auto mc = monte_carlo_runtime(rule, profile, args.samples, args.seed, args.delay_mode,
                                machine.compute_s, machine);
  if (!mc) return mc.error();
  j["monte_carlo"] = {{"seconds_per_iteration", mc->seconds},
                      {"ci95", mc->ci95},
                      {"iterations", mc->iterations},
                      {"mean_staleness", mc->mean_staleness}};
  if (!machine.free()) j["monte_carlo"]["server_utilization"] = mc->server_utilization;
  if (!machine.free() && server_table) {
    auto server = server_rows(rule, profile, args, machine);
    if (!server) return server.error();
    j["server"] = std::move(server).value();
  }
  return j;
}

std::string closed_text(const nlohmann::json& c) {
  if (!c.contains("closed_form")) return "-";
  const auto& f = c["closed_form"];
  return fmt::format("{}{:.6f}", f["upper_bound"].get<bool>() ? "<= " : "",
                     f["seconds_per_iteration"].get<double>());
}

}  // namespace

int run_theory(const TheoryArgs& args) {
  if (auto s = check_monte_carlo_size(args.workers, args.samples); !s) {
    return fail(s.error().message, 2);
  }
  auto profile = StragglerProfile::parse(args.delay, args.workers);
  if (!profile) return fail(profile.error().message, 2);
  auto machine = theory_machine(args);
  if (!machine) return fail(machine.error().message, 2);
  const bool modelled = !machine->free() || machine->compute_s > 0.0;
  if (!modelled && profile->iid() != nullptr && !(profile->iid()->mean() > 0.0)) {
    return fail(fmt::format("delay spec '{}' has no positive mean delay, so every rule takes no "
                            "time; give e.g. --delay exp:mean=20ms",
                            args.delay),
                2);
  }
  if (profile->iid() != nullptr && !std::isfinite(profile->iid()->mean())) {
    return fail(fmt::format("delay spec '{}' has an infinite mean, so E[T] is infinite for the "
                            "asynchronous rules; use a pareto shape > 1",
                            args.delay),
                2);
  }
  std::vector<RuleSpec> specs;
  if (args.rule.empty()) {
    // Every rule for K = 1, 2, 4, ... and P (the baselines with flags of their own aside).
    specs = every_rule_specs(args.workers);
  } else {
    specs.push_back({args.rule, args.k, args.params});
  }
  std::vector<RuleConfig> rules;
  for (const auto& spec : specs) {
    auto r = resolve_rule(spec, args.workers);
    if (!r) return fail(r.error().message, 2);
    rules.push_back(*r);
  }

  nlohmann::json out;
  out["workers"] = args.workers;
  out["delay"] = args.delay;
  out["delay_mode"] = to_string(args.delay_mode);
  if (modelled) {
    out["machine"] = {{"describe", machine->describe()},
                      {"cores", machine->cores},
                      {"server_gradient_s", machine->server_gradient_s},
                      {"server_update_s", machine->server_update_s},
                      {"shards", machine->shards},
                      {"link_latency_s", machine->link.latency_s},
                      {"link_bandwidth_bps", machine->link.bandwidth_bps},
                      {"compute_s", machine->compute_s},
                      {"parameters", machine->parameters},
                      {"model", machine->model}};
    out["saturation_max"] = args.saturation_max;
  }
  out["rules"] = nlohmann::json::array();
  for (const auto& rule : rules) {
    auto c = cell(rule, *profile, args, *machine);
    if (!c) return fail(c.error().message);
    out["rules"].push_back(std::move(c).value());
  }
  // E[T_sync] / E[T_async]: P H_P for exponential delays (docs/theory.md).
  // The ratio's cells need no server table.
  auto sync_rule = resolve_rule(all_workers_rule(), args.workers);
  auto async_rule = resolve_rule(each_gradient_rule(), args.workers);
  if (!sync_rule || !async_rule) return fail("the paper's sync or async rule is not registered", 3);
  auto sync_cell = cell(*sync_rule, *profile, args, *machine, false);
  if (!sync_cell) return fail(sync_cell.error().message);
  auto async_cell = cell(*async_rule, *profile, args, *machine, false);
  if (!async_cell) return fail(async_cell.error().message);
  const nlohmann::json& sync = *sync_cell;
  const nlohmann::json& async = *async_cell;
  nlohmann::json ratio;
  if (sync.contains("closed_form") && async.contains("closed_form") &&
      !async["closed_form"]["upper_bound"].get<bool>()) {
    ratio["closed_form"] = sync["closed_form"]["seconds_per_iteration"].get<double>() /
                           async["closed_form"]["seconds_per_iteration"].get<double>();
  }
  if (sync.contains("monte_carlo") && async.contains("monte_carlo")) {
    ratio["monte_carlo"] = sync["monte_carlo"]["seconds_per_iteration"].get<double>() /
                           async["monte_carlo"]["seconds_per_iteration"].get<double>();
  }
  ratio["p_h_p"] = args.workers * harmonic(args.workers);
  out["sync_over_async"] = ratio;

  if (args.json) {
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  fmt::print("P = {}, delay {} ({}), Monte Carlo: {} iterations per cell, seed {}\n", args.workers,
             args.delay, to_string(args.delay_mode), args.samples, args.seed);
  if (modelled) {
    fmt::print("machine: {} (docs/machine.md): Monte Carlo only\n", machine->describe());
  }
  fmt::print("\n");
  fmt::print("{:<14} {:>4}  {:>14}  {:>22}  {:>9}  {}\n", "rule", "K", "closed form s",
             "monte carlo s (95% CI)", "staleness", "formula");
  for (const auto& c : out["rules"]) {
    const std::string mc =
        c.contains("monte_carlo")
            ? fmt::format("{:.6f} ± {:.6f}",
                          c["monte_carlo"]["seconds_per_iteration"].get<double>(),
                          c["monte_carlo"]["ci95"].get<double>())
            : std::string("-");
    const std::string st =
        c.contains("monte_carlo")
            ? fmt::format("{:.2f}", c["monte_carlo"]["mean_staleness"].get<double>())
            : std::string("-");
    fmt::print("{:<14} {:>4}  {:>14}  {:>22}  {:>9}  {}\n", c["rule"].get<std::string>(),
               c["k"].get<int>(), closed_text(c), mc, st,
               c.contains("closed_form") ? c["closed_form"]["formula"].get<std::string>() : "");
  }
  fmt::print("\nE[T_sync] / E[T_async]: ");
  if (ratio.contains("closed_form"))
    fmt::print("closed form {:.3f}, ", ratio["closed_form"].get<double>());
  if (ratio.contains("monte_carlo"))
    fmt::print("monte carlo {:.3f}, ", ratio["monte_carlo"].get<double>());
  fmt::print("P H_P = {:.3f} (the exponential case)\n", ratio["p_h_p"].get<double>());
  if (!machine->free()) print_server_table(out);
  return 0;
}

}  // namespace stalesgd::cli
