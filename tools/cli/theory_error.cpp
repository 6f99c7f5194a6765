// `stalesgd theory --error`: the error bounds (Lemma 1 for the synchronous rules, Theorem 3'
// for the asynchronous ones, docs/theory.md) with constants estimated for a model and data set,
// combined with the runtime theory (J = t / E[T]) into predicted error at wallclock budgets,
// and the best K per budget. docs/theory.md, "Error"; docs/cli.md.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/flag_parsing.hpp"
#include "rules/reference_rules.hpp"
#include "stalesgd/data/catalog.hpp"
#include "stalesgd/rules/rule_registry.hpp"
#include "stalesgd/straggler/duration.hpp"
#include "stalesgd/theory/error_bound.hpp"
#include "stalesgd/theory/runtime.hpp"
#include "theory/error_constants.hpp"

namespace stalesgd::cli {
namespace {

struct ErrorArgs {
  TheoryArgs runtime;  // --rule, --workers, --k, --delay, --samples, --seed
  ModelSpec model;     // --model, --l2
  std::string dataset = "mnist";
  std::string data_dir = "data";
  double lr = 0.05;
  int batch = 32;
  std::vector<double> budgets;  // seconds; empty: 10, 100, 1000, 10000 x the fastest E[T]
  ConstantsOptions constants;
  std::optional<double> p0, gamma;  // overrides of the async rules' staleness constants
};

// E[T], the mean staleness and the share of fresh gradients for one rule: E[T] from the closed
// form when it is a value, else the Monte Carlo; the other two always from the Monte Carlo.
struct Runtime {
  double seconds = 0.0;
  double staleness = 0.0;
  std::string method;
  double fresh = 1.0;  // p0 of the rule's own arrival process (k-batch-async's is not K/P)
};

Result<Runtime> runtime_of(const RuleConfig& rule, const StragglerProfile& profile,
                           const TheoryArgs& a) {
  auto mc = monte_carlo_runtime(rule, profile, a.samples, a.seed, a.delay_mode);
  if (!mc) return mc.error();
  Runtime r{mc->seconds, mc->mean_staleness, "monte carlo", mc->fresh_fraction};
  if (const Distribution* x = profile.iid()) {
    if (auto c = closed_form_runtime(rule, *x); c && !c->upper_bound) {
      r.seconds = c->seconds;
      r.method = "closed form";
    }
  }
  return r;
}

Result<std::vector<double>> parse_budgets(const std::string& text) {
  std::vector<double> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    auto d = parse_duration(item);
    if (!d || !(*d > 0.0)) {
      return Error{
          fmt::format("--budget '{}' is not a positive duration list like 1s,10s,60s", text)};
    }
    out.push_back(*d);
  }
  return out;
}

int run_theory_error(ErrorArgs a) {
  if (a.model.name != "softmax") {
    return fail(fmt::format("--model {} is not convex: the error bounds need a strongly convex "
                            "loss, i.e. --model softmax with --l2 > 0",
                            a.model.name),
                2);
  }
  if (!(a.model.l2 > 0.0f)) {
    return fail(fmt::format("--l2 {} leaves the softmax loss not strongly convex, so the error "
                            "bounds (c = l2 > 0) do not apply; give e.g. --l2 1e-3",
                            a.model.l2),
                2);
  }
  const TheoryArgs& t = a.runtime;
  if (t.delay.empty())
    return usage_error("theory", "--delay is required, e.g. --delay exp:mean=10ms");
  if (auto s = check_monte_carlo_size(t.workers, t.samples); !s) return fail(s.error().message, 2);
  auto profile = StragglerProfile::parse(t.delay, t.workers);
  if (!profile) return fail(profile.error().message, 2);
  if (profile->iid() == nullptr || !(profile->iid()->mean() > 0.0) ||
      !std::isfinite(profile->iid()->mean())) {
    return fail(fmt::format("delay spec '{}' needs i.i.d. delays with a positive, finite mean for "
                            "E[T]; give e.g. --delay exp:mean=10ms",
                            t.delay),
                2);
  }
  std::vector<RuleConfig> rules;
  // Theorem 1's K-sync unless --rule says otherwise; a rule whose K is fixed (sync, async)
  // at that K alone, the others at K = 1, 2, 4, ..., P.
  const std::string rule = t.rule.empty() ? first_k_rule(1).name : t.rule;
  const RuleInfo* info = find_rule(rule);
  std::vector<int> ks;
  if (t.k > 0 || (info != nullptr && info->k != KChoice::kGiven)) {
    ks.push_back(t.k);
  } else {
    for (int k = 1; k <= t.workers; k = k * 2 > t.workers && k != t.workers ? t.workers : k * 2)
      ks.push_back(k);
  }
  for (int k : ks) {
    auto r = resolve_rule({rule, k}, t.workers);
    if (!r) return fail(r.error().message, 2);
    rules.push_back(*r);
  }
  auto data = load_dataset(a.dataset, a.data_dir);
  if (!data) return fail(data.error().message);
  auto model = make_model(a.model, data->train.shape, data->num_classes);
  if (!model) return fail(model.error().message, 2);
  a.constants.seed = t.seed;
  a.constants.variance_batch = a.batch;
  auto est = estimate_error_constants(**model, a.model.l2, data->train, a.constants);
  if (!est) return fail(est.error().message, 2);

  nlohmann::json out;
  out["constants"] = {{"c", est->k.c},
                      {"L", est->k.L},
                      {"L_w0", est->L_w0},
                      {"L_star", est->L_star},
                      {"sigma2", est->k.sigma2},
                      {"sigma2_batch", est->sigma2_batch},
                      {"f0", est->f0},
                      {"f_star", est->f_star},
                      {"grad_norm_star", est->grad_norm_star},
                      {"train_loss_star", est->train_loss_star},
                      {"l2_term_star", est->l2_term_star},
                      {"train_objective_star", est->train_objective_star}};
  std::vector<ErrorBound> bounds;
  std::vector<Runtime> times;
  for (const auto& r : rules) {
    auto rt = runtime_of(r, *profile, t);
    if (!rt) return fail(rt.error().message);
    Staleness s{a.p0.value_or(rt->fresh),
                a.gamma.value_or(drift_gamma(a.lr, est->k.L, rt->staleness))};
    if (r.synchronous()) s = {};
    bounds.push_back(error_bound(r, est->k, s, a.lr, a.batch));
    times.push_back(*rt);
    out["rules"].push_back({{"rule", r.rule},
                            {"k", r.k},
                            {"seconds_per_iteration", rt->seconds},
                            {"runtime_method", rt->method},
                            {"mean_staleness", rt->staleness},
                            {"p0", s.p0},
                            {"gamma", s.gamma},
                            {"gamma_prime", bounds.back().gamma_prime},
                            {"floor", bounds.back().floor},
                            {"rate", bounds.back().rate},
                            {"theorem", bounds.back().theorem},
                            {"warnings", bounds.back().warnings}});
  }
  if (a.budgets.empty()) {
    double fastest = std::numeric_limits<double>::infinity();
    for (const auto& rt : times) fastest = std::min(fastest, rt.seconds);
    for (double m : {10.0, 100.0, 1000.0, 10000.0}) a.budgets.push_back(m * fastest);
  }
  for (double budget : a.budgets) {
    nlohmann::json row{{"seconds", budget}};
    std::size_t best = 0;
    for (std::size_t i = 0; i < rules.size(); ++i) {
      const double e = error_at_time(bounds[i], budget, times[i].seconds);
      row["errors"].push_back(e);
      if (e < error_at_time(bounds[best], budget, times[best].seconds)) best = i;
    }
    row["best_k"] = rules[best].k;
    out["budgets"].push_back(row);
  }
  if (t.json) {
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  const auto& c = out["constants"];
  fmt::print("{} on {} (first {} samples), l2 {}, lr {}, batch {}, P = {}, delay {}\n",
             (*model)->describe(), a.dataset,
             a.constants.samples == 0 ? data->train.count : a.constants.samples, a.model.l2, a.lr,
             a.batch, t.workers, t.delay);
  fmt::print("c = {:.4g}  L = {:.4g} (w0 {:.4g}, w* {:.4g})  sigma^2 = {:.4g} per sample\n",
             est->k.c, est->k.L, est->L_w0, est->L_star, est->k.sigma2);
  fmt::print("F(w0) = {:.5f}  F* = {:.5f} (|grad F(w*)| = {:.2g})\n\n", est->f0, est->f_star,
             c["grad_norm_star"].get<double>());
  fmt::print("{:<13} {:>3} {:>11} {:>10} {:>5} {:>6} {:>10} {:>11}", "rule", "K", "E[T] s",
             "theorem", "p0", "gamma'", "floor", "1 - rate");
  for (double b : a.budgets) fmt::print(" {:>10}", fmt::format("t={:.3g}s", b));
  fmt::print("\n");
  for (std::size_t i = 0; i < rules.size(); ++i) {
    fmt::print("{:<13} {:>3} {:>11.6f} {:>10} {:>5.3f} {:>6.3f} {:>10.4g} {:>11.3g}", rules[i].rule,
               rules[i].k, times[i].seconds, bounds[i].theorem, out["rules"][i]["p0"].get<double>(),
               bounds[i].gamma_prime, bounds[i].floor, 1.0 - bounds[i].rate);
    for (const auto& row : out["budgets"]) fmt::print(" {:>10.4g}", row["errors"][i].get<double>());
    fmt::print("\n");
  }
  fmt::print("{:<13} {:>3} {:>11} {:>10} {:>5} {:>6} {:>10} {:>11}", "best K", "", "", "", "", "",
             "", "");
  for (const auto& row : out["budgets"]) fmt::print(" {:>10}", row["best_k"].get<int>());
  fmt::print("\n");
  for (std::size_t i = 0; i < rules.size(); ++i) {
    for (const auto& w : bounds[i].warnings) fmt::print("note: K = {}: {}\n", rules[i].k, w);
  }
  return 0;
}

}  // namespace

int theory_error_command(int argc, char** argv) {
  cxxopts::Options options(
      "stalesgd theory --error",
      "Predicted excess loss E[F(w)] - F* against wallclock for each K: the error bounds of\n"
      "Dutta et al. 2018 (Lemma 1; Theorem 3' as docs/theory.md derives it) with constants\n"
      "estimated for the model and data, times J = t / E[T] from the runtime theory.\n"
      "Docs: docs/theory.md (\"Error\").");
  // clang-format off
  options.add_options()
      ("error", "Predict error, not only runtime")
      ("rule", rule_choices(/*with_own_flags=*/false), cxxopts::value<std::string>()->default_value(first_k_rule(1).name))
      ("workers", "Number of workers P", cxxopts::value<int>()->default_value("8"))
      ("k", "(--k) Gradients per update K (default: K = 1, 2, 4, ..., P)", cxxopts::value<int>())
      ("delay", "Delay spec, e.g. 'exp:mean=10ms' (docs/stragglers.md)", cxxopts::value<std::string>())
      ("samples", "Simulated iterations per Monte-Carlo estimate", cxxopts::value<std::uint64_t>()->default_value("20000"))
      ("seed", "The run's seed: w0, and the estimates' draws", cxxopts::value<std::uint64_t>()->default_value("1"))
      ("model", "softmax (the bounds need a strongly convex loss)", cxxopts::value<std::string>()->default_value("softmax"))
      ("l2", "L2 coefficient lambda = the strong convexity c (> 0)", cxxopts::value<double>()->default_value("0"))
      ("dataset", "mnist | fashion-mnist | cifar10 | npz:PATH", cxxopts::value<std::string>()->default_value("mnist"))
      ("data-dir", "Directory holding the data sets", cxxopts::value<std::string>()->default_value("data"))
      ("lr", "Fixed learning rate eta", cxxopts::value<double>()->default_value("0.05"))
      ("batch", "Samples per minibatch gradient m", cxxopts::value<int>()->default_value("32"))
      ("budget", "Wallclock budgets, e.g. 1s,10s,60s (default: 10, 100, 1000, 10000 x the fastest E[T])", cxxopts::value<std::string>())
      ("constants-samples", "F is the mean over the first N training samples (0: all)", cxxopts::value<std::size_t>()->default_value("0"))
      ("optimum-epochs", "Epochs of the minimisation that finds w* and F*", cxxopts::value<int>()->default_value("30"))
      ("p0", "Async rules: P(fresh gradient) (default: the rule's own, from the Monte Carlo; K/P for k-async under exp delays)", cxxopts::value<double>())
      ("gamma", "Async rules: staleness constant gamma in [0, 1] (default min(1, (lr L staleness)^2))", cxxopts::value<double>())
      ("json", "Print JSON instead of a table")
      ("h,help", "Show this help");
  // clang-format on
  add_train_flags(options, {"delay-mode"});
  add_logging_options(options);
  try {
    auto r = parse(options, argc, argv);
    if (auto done = help_or_logging(options, r)) return *done;
    ErrorArgs a;
    TheoryArgs& t = a.runtime;
    t.rule = r["rule"].as<std::string>();
    t.workers = r["workers"].as<int>();
    if (t.workers < 1 || t.workers > 4096)
      return fail(fmt::format("--workers {} is out of range; use 1 to 4096", t.workers), 2);
    if (r.count("k")) {
      t.k = r["k"].as<int>();
      if (t.k < 1) return fail(fmt::format("--k {} must satisfy 1 <= K <= P", t.k), 2);
    }
    if (r.count("delay")) t.delay = r["delay"].as<std::string>();
    {
      TrainerOptions given;  // --delay-mode read as train reads it (the option table)
      if (auto s = set_train_flags(r, {"delay-mode"}, given); !s) return fail(s.error().message, 2);
      t.delay_mode = given.delay_mode;
    }
    t.samples = r["samples"].as<std::uint64_t>();
    if (t.samples < 100)
      return fail(fmt::format("--samples {} is too few; use at least 100", t.samples), 2);
    t.seed = r["seed"].as<std::uint64_t>();
    t.json = r.count("json") > 0;
    a.model.name = r["model"].as<std::string>();
    a.model.l2 = static_cast<float>(r["l2"].as<double>());
    a.dataset = r["dataset"].as<std::string>();
    a.data_dir = r["data-dir"].as<std::string>();
    a.lr = r["lr"].as<double>();
    if (!(a.lr > 0.0)) return fail(fmt::format("--lr {} must be positive", a.lr), 2);
    a.batch = r["batch"].as<int>();
    if (a.batch < 1 || a.batch > 65536)
      return fail(fmt::format("--batch {} is out of range; use 1 to 65536", a.batch), 2);
    if (r.count("budget")) {
      auto b = parse_budgets(r["budget"].as<std::string>());
      if (!b) return fail(b.error().message, 2);
      a.budgets = *b;
    }
    a.constants.samples = r["constants-samples"].as<std::size_t>();
    a.constants.optimum_epochs = r["optimum-epochs"].as<int>();
    if (a.constants.optimum_epochs < 1) return fail("--optimum-epochs must be at least 1", 2);
    if (r.count("p0")) {
      a.p0 = r["p0"].as<double>();
      if (!(*a.p0 > 0.0 && *a.p0 <= 1.0)) return fail("--p0 must be in (0, 1]", 2);
    }
    if (r.count("gamma")) {
      a.gamma = r["gamma"].as<double>();
      if (!(*a.gamma >= 0.0 && *a.gamma <= 1.0)) return fail("--gamma must be in [0, 1]", 2);
    }
    return run_theory_error(std::move(a));
  } catch (const cxxopts::exceptions::exception& e) {
    return usage_error("theory --error", e);
  }
}

}  // namespace stalesgd::cli
