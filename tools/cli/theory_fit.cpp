// `stalesgd theory --fit RUN_DIR`: fits the minibatch durations a run measured (gradients.csv's
// duration_s) with fit_delays, prints every family's fit and the chosen one as a delay spec,
// and predicts each rule's seconds per iteration from it; docs/theory.md, "Fitted delays".
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/fit_inputs.hpp"
#include "stalesgd/rules/rule_registry.hpp"
#include "stalesgd/theory/delay_fit.hpp"
#include "stalesgd/theory/runtime.hpp"

namespace stalesgd::cli {
namespace {
namespace fs = std::filesystem;

// What the fitted durations hold besides the injected delay, in one or two sentences.
std::string compute_note(const RunInfo& run, const DelayFit& fit, double& beyond_s) {
  beyond_s = std::nan("");
  const auto profile = StragglerProfile::parse(run.delay, run.workers);
  const Distribution* x = profile ? profile->iid() : nullptr;
  if (run.clock == "virtual") {
    if (run.compute_time_s == 0.0) {
      return "On the virtual clock with no --compute-time the durations are the drawn delays X.";
    }
    beyond_s = run.compute_time_s;
    const FamilyFit& best = fit.best();
    std::string alone;
    if (run.delay_mode == "add" && best.family == "shifted-exp" &&
        best.parameters[0].value > run.compute_time_s) {
      alone = fmt::format(": the delay alone is shifted-exp:shift={},mean={}",
                          spec_duration(best.parameters[0].value - run.compute_time_s),
                          spec_duration(best.parameters[1].value));
    }
    return fmt::format("On the virtual clock a minibatch takes {} for the compute time C = {}{}.",
                       run.delay_mode == "add" ? "C + X" : "max(C, X)",
                       spec_duration(run.compute_time_s), alone);
  }
  if (x == nullptr) {
    return "The run's delays are not i.i.d. (per-worker clauses, changes or a trace): the fit "
           "pools every worker's durations.";
  }
  beyond_s = fit.mean_s - x->mean();
  if (x->mean() == 0.0) {
    return fmt::format(
        "No injected delay: the durations are the measured compute time (and "
        "the engine's own), mean {}.",
        spec_duration(fit.mean_s));
  }
  return fmt::format(
      "Measured mean duration {} against the injected delay's mean E[X] = {} ('{}', {}): {} "
      "per minibatch on top of X, the compute time and the engine's own{}.",
      spec_duration(fit.mean_s), spec_duration(x->mean()), run.delay, run.delay_mode,
      beyond_s >= 0.0 ? spec_duration(beyond_s) : "-" + spec_duration(-beyond_s),
      run.delay_mode == "pad" ? " (pad: compute shows only where it outlasts X)" : "");
}

nlohmann::json fit_json(const DelayFit& fit) {
  nlohmann::json families = nlohmann::json::array();
  for (const auto& f : fit.families) {
    nlohmann::json j{{"family", f.family}, {"fitted", f.fitted}};
    if (!f.fitted) {
      j["not_fitted"] = f.not_fitted;
    } else {
      for (const auto& p : f.parameters) j["parameters"][p.name] = p.value;
      j["log_likelihood"] = f.log_likelihood;
      j["aic"] = f.aic;
      j["spec"] = f.spec;
    }
    families.push_back(j);
  }
  return families;
}

// One prediction: the closed form where there is one, and the Monte Carlo.
Result<nlohmann::json> predict(const RuleConfig& rule, const StragglerProfile& profile,
                               const TheoryArgs& args) {
  nlohmann::json j{{"rule", rule.rule}, {"k", rule.k}};
  if (auto c = closed_form_runtime(rule, *profile.iid())) {
    j["closed_form"] = {{"seconds_per_iteration", c->seconds},
                        {"formula", c->formula},
                        {"upper_bound", c->upper_bound}};
  }
  auto mc = monte_carlo_runtime(rule, profile, args.samples, args.seed);
  if (!mc) return mc.error();
  j["monte_carlo"] = {{"seconds_per_iteration", mc->seconds},
                      {"ci95", mc->ci95},
                      {"mean_staleness", mc->mean_staleness}};
  // The value: the closed form when exact, else the Monte Carlo (as summary.json's theory).
  const bool exact = j.contains("closed_form") && !j["closed_form"]["upper_bound"].get<bool>();
  j["seconds_per_iteration"] =
      exact ? j["closed_form"]["seconds_per_iteration"].get<double>() : mc->seconds;
  return j;
}

// Every rule at K = 1, 2, 4, ..., P (as `theory` without --rule), or the one asked for.
Result<std::vector<RuleConfig>> rules_to_predict(const TheoryArgs& args, int p) {
  std::vector<RuleSpec> specs;
  if (!args.rule.empty()) {
    specs.push_back({args.rule, args.k, args.params});
  } else {
    specs = every_rule_specs(p);
  }
  std::vector<RuleConfig> out;
  for (const auto& s : specs) {
    auto r = resolve_rule(s, p);
    if (r) {
      out.push_back(*r);
    } else if (!args.rule.empty()) {
      return r.error();
    }  // else a rule that needs parameters of its own besides K: not tabulated
  }
  return out;
}

void print_text(const fs::path& dir, const RunInfo& run, const nlohmann::json& out) {
  const auto& d = out["durations"];
  fmt::print(
      "{} minibatch durations (gradients.csv duration_s) of {}: {}-clock {} run, K = {}, "
      "P = {}, --delay {} ({})\n",
      d["n"].get<std::size_t>(), dir.string(), run.clock, run.rule.name, out["run"]["k"].get<int>(),
      run.workers, run.delay, run.delay_mode);
  fmt::print("durations: mean {}, min {}, median {}, max {}\n\n",
             spec_duration(d["mean_s"].get<double>()), spec_duration(d["min_s"].get<double>()),
             spec_duration(d["median_s"].get<double>()), spec_duration(d["max_s"].get<double>()));
  fmt::print("{:<12} {:>14} {:>14}  {}\n", "family", "log-lik", "AIC", "fit (delay spec)");
  for (const auto& f : out["families"]) {
    const bool chosen = f["family"] == out["chosen"]["family"];
    if (!f["fitted"].get<bool>()) {
      fmt::print("{:<12} {:>14} {:>14}  not fitted: {}\n", f["family"].get<std::string>(), "-", "-",
                 f["not_fitted"].get<std::string>());
      continue;
    }
    fmt::print("{:<12} {:>14.2f} {:>14.2f}  {}{}\n", f["family"].get<std::string>(),
               f["log_likelihood"].get<double>(), f["aic"].get<double>(),
               f["spec"].get<std::string>(), chosen ? "   <- chosen" : "");
  }
  fmt::print(
      "\nchosen by the lowest AIC = 2 k - 2 ln L (k parameters: exp 1, the others 2):\n"
      "  --delay '{}'\n",
      out["chosen"]["spec"].get<std::string>());
  fmt::print("The fit is of the whole minibatch time (compute plus delay). {}\n",
             out["compute"]["note"].get<std::string>());
  for (const auto& w : out["warnings"]) fmt::print("warning: {}\n", w.get<std::string>());
  fmt::print(
      "\nP = {}, delay {} (the fit as X, nothing added), Monte Carlo: {} iterations per "
      "cell, seed {}\n\n",
      run.workers, out["chosen"]["spec"].get<std::string>(), out["samples"].get<std::uint64_t>(),
      out["seed"].get<std::uint64_t>());
  fmt::print("{:<14} {:>4}  {:>14}  {:>22}  {:>9}\n", "rule", "K", "closed form s",
             "monte carlo s (95% CI)", "staleness");
  for (const auto& c : out["rules"]) {
    std::string closed = "-";
    if (c.contains("closed_form")) {
      const auto& f = c["closed_form"];
      closed = fmt::format("{}{:.6f}", f["upper_bound"].get<bool>() ? "<= " : "",
                           f["seconds_per_iteration"].get<double>());
    }
    const auto& mc = c["monte_carlo"];
    fmt::print("{:<14} {:>4}  {:>14}  {:>22}  {:>9.2f}\n", c["rule"].get<std::string>(),
               c["k"].get<int>(), closed,
               fmt::format("{:.6f} ± {:.6f}", mc["seconds_per_iteration"].get<double>(),
                           mc["ci95"].get<double>()),
               mc["mean_staleness"].get<double>());
  }
  const auto& m = out["measured"];
  fmt::print(
      "\nthe run itself, {} K = {}: measured {:.6f} s per iteration, predicted {:.6f} s, "
      "measured / predicted {:.3f}\n",
      m["rule"].get<std::string>(), m["k"].get<int>(), m["seconds_per_iteration"].get<double>(),
      m["predicted"].get<double>(), m["ratio"].get<double>());
}

}  // namespace

int run_theory_fit(const std::string& run_dir, const TheoryArgs& args) {
  if (args.samples < 100) {
    return fail(fmt::format("--samples {} is too few; use at least 100", args.samples), 2);
  }
  const fs::path dir(run_dir);
  auto run = read_summary(dir);
  if (!run) return fail(run.error().message);
  if (auto s = check_monte_carlo_size(run->workers, args.samples); !s) {
    return fail(s.error().message, 2);
  }
  auto own = resolve_rule(run->rule, run->workers);
  if (!own)
    return fail(fmt::format("{}: {}", (dir / "summary.json").string(), own.error().message));
  auto durations = read_durations(dir);
  if (!durations) return fail(durations.error().message);
  auto fit = fit_delays(*durations);
  if (!fit)
    return fail(fmt::format("{}: {}", (dir / "gradients.csv").string(), fit.error().message));
  const FamilyFit& best = fit->best();
  auto profile = StragglerProfile::parse(best.spec, run->workers);
  if (!profile || profile->iid() == nullptr) {  // not reached: fit_delays' specs parse
    return fail(fmt::format("the fitted spec '{}' does not parse", best.spec));
  }

  nlohmann::json out;
  out["run"] = {{"dir", dir.string()},           {"workers", run->workers},
                {"rule", run->rule.name},        {"k", own->k},
                {"clock", run->clock},           {"delay", run->delay},
                {"delay_mode", run->delay_mode}, {"compute_time", run->compute_time_s}};
  out["durations"] = {{"n", fit->n},
                      {"mean_s", fit->mean_s},
                      {"min_s", fit->min_s},
                      {"median_s", fit->median_s},
                      {"max_s", fit->max_s}};
  out["families"] = fit_json(*fit);
  const double fit_mean = profile->iid()->mean();
  if (!std::isfinite(fit_mean)) {
    return fail(
        fmt::format("{}: the best fit, {}, has an infinite mean, so E[T] is infinite "
                    "for the asynchronous rules; record more durations or fit them "
                    "yourself with stalesgd theory --delay",
                    (dir / "gradients.csv").string(), best.spec));
  }
  out["chosen"] = {
      {"family", best.family}, {"spec", best.spec}, {"by", "AIC"}, {"mean_s", fit_mean}};
  out["warnings"] = nlohmann::json::array();
  // The likelihood follows the bulk of the durations; the rules that average (the async
  // family) follow the mean, which a rare long tail can carry.
  if (!(std::abs(fit_mean / fit->mean_s - 1.0) <= 0.2)) {
    out["warnings"].push_back(fmt::format(
        "the fitted {}'s mean {} is {:.2f} x the durations' mean {}: the fit misses what "
        "carries the mean (a rare long tail?), so the predictions that follow E[X] are off",
        best.family, spec_duration(fit_mean), fit_mean / fit->mean_s, spec_duration(fit->mean_s)));
  }
  double beyond_s = 0.0;
  out["compute"]["note"] = compute_note(*run, *fit, beyond_s);
  if (std::isfinite(beyond_s)) out["compute"]["beyond_delay_s"] = beyond_s;
  // The cancelling rules record only the gradients that made a round: the fastest ones.
  if (make_rule(*own)->cuts_in_flight() && own->k < run->workers) {
    out["warnings"].push_back(fmt::format(
        "{} with K = {} < P cuts the slower minibatches, which gradients.csv never holds: "
        "the fit sees the fast ones only and is biased short; fit an async or sync run",
        run->rule.name, own->k));
  }
  out["samples"] = args.samples;
  out["seed"] = args.seed;
  auto rules = rules_to_predict(args, run->workers);
  if (!rules) return fail(rules.error().message, 2);
  out["rules"] = nlohmann::json::array();
  for (const auto& rule : *rules) {
    auto c = predict(rule, *profile, args);
    if (!c) return fail(c.error().message);
    out["rules"].push_back(std::move(c).value());
  }
  auto mine = predict(*own, *profile, args);
  if (!mine) return fail(mine.error().message);
  const double predicted = (*mine)["seconds_per_iteration"].get<double>();
  out["measured"] = {{"rule", run->rule.name},
                     {"k", own->k},
                     {"seconds_per_iteration", run->seconds_per_iteration},
                     {"predicted", predicted},
                     {"ratio", run->seconds_per_iteration / predicted}};
  if (args.json) {
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  print_text(dir, *run, out);
  return 0;
}

}  // namespace stalesgd::cli
