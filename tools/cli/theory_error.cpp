// `stalesgd theory --error`: its flags into an ErrorRequest, and predict_errors' table or JSON
// (stalesgd/theory/error_prediction.hpp: the error bounds of Lemma 1 and Theorem 3' with
// estimated constants, J = t / E[T], the best K per budget). docs/theory.md, "Error";
// docs/cli.md.
#include <fmt/format.h>

#include <sstream>

#include "cli/commands.hpp"
#include "cli/flag_parsing.hpp"
#include "rules/reference_rules.hpp"
#include "stalesgd/data/catalog.hpp"
#include "stalesgd/rules/rule_registry.hpp"
#include "stalesgd/straggler/duration.hpp"
#include "stalesgd/theory/error_prediction.hpp"
#include "theory/error_prediction_json.hpp"

namespace stalesgd::cli {
namespace {

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

int run_theory_error(const ErrorRequest& request, const std::string& dataset,
                     const std::string& data_dir, bool json) {
  if (auto s = check_error_request(request); !s) return fail(s.error().message, 2);
  auto data = load_dataset(dataset, data_dir);
  if (!data) return fail(data.error().message);
  auto p = predict_errors(request, *data);
  if (!p) return fail(p.error().message, 2);
  if (json) {
    fmt::print("{}\n", error_prediction_json(*p).dump(2));
    return 0;
  }
  const EstimatedConstants& est = p->constants;
  fmt::print("{} on {} (first {} samples), l2 {}, lr {}, batch {}, P = {}, delay {}\n", p->model,
             dataset, p->constants_samples, request.model.l2, request.lr, request.batch,
             request.workers, request.delay);
  fmt::print("c = {:.4g}  L = {:.4g} (w0 {:.4g}, w* {:.4g})  sigma^2 = {:.4g} per sample\n",
             est.k.c, est.k.L, est.L_w0, est.L_star, est.k.sigma2);
  fmt::print("F(w0) = {:.5f}  F* = {:.5f} (|grad F(w*)| = {:.2g})\n\n", est.f0, est.f_star,
             est.grad_norm_star);
  fmt::print("{:<13} {:>3} {:>11} {:>10} {:>5} {:>6} {:>10} {:>11}", "rule", "K", "E[T] s",
             "theorem", "p0", "gamma'", "floor", "1 - rate");
  for (const auto& b : p->budgets) fmt::print(" {:>10}", fmt::format("t={:.3g}s", b.seconds));
  fmt::print("\n");
  for (std::size_t i = 0; i < p->rules.size(); ++i) {
    const RuleError& e = p->rules[i];
    fmt::print("{:<13} {:>3} {:>11.6f} {:>10} {:>5.3f} {:>6.3f} {:>10.4g} {:>11.3g}", e.rule.rule,
               e.rule.k, e.seconds_per_iteration, e.bound.theorem, e.staleness.p0,
               e.bound.gamma_prime, e.bound.floor, 1.0 - e.bound.rate);
    for (const auto& b : p->budgets) fmt::print(" {:>10.4g}", b.errors[i]);
    fmt::print("\n");
  }
  fmt::print("{:<13} {:>3} {:>11} {:>10} {:>5} {:>6} {:>10} {:>11}", "best K", "", "", "", "", "",
             "", "");
  for (const auto& b : p->budgets) fmt::print(" {:>10}", b.best_k);
  fmt::print("\n");
  for (const auto& e : p->rules) {
    for (const auto& w : e.bound.warnings) fmt::print("note: K = {}: {}\n", e.rule.k, w);
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
    ErrorRequest q;
    q.rule = {r["rule"].as<std::string>(), r.count("k") ? r["k"].as<int>() : 0, {}};
    if (r.count("k") && q.rule.k < 1) {
      return fail(fmt::format("--k {} must satisfy 1 <= K <= P", q.rule.k), 2);
    }
    q.workers = r["workers"].as<int>();
    if (r.count("delay")) q.delay = r["delay"].as<std::string>();
    {
      TrainerOptions given;  // --delay-mode read as train reads it (the option table)
      if (auto s = set_train_flags(r, {"delay-mode"}, given); !s) return fail(s.error().message, 2);
      q.delay_mode = given.delay_mode;
    }
    q.samples = r["samples"].as<std::uint64_t>();
    q.seed = r["seed"].as<std::uint64_t>();
    q.model.name = r["model"].as<std::string>();
    q.model.l2 = static_cast<float>(r["l2"].as<double>());
    q.lr = r["lr"].as<double>();
    q.batch = r["batch"].as<int>();
    if (r.count("budget")) {
      auto b = parse_budgets(r["budget"].as<std::string>());
      if (!b) return fail(b.error().message, 2);
      q.budgets = *b;
    }
    q.constants_samples = r["constants-samples"].as<std::size_t>();
    q.optimum_epochs = r["optimum-epochs"].as<int>();
    if (r.count("p0")) q.p0 = r["p0"].as<double>();
    if (r.count("gamma")) q.gamma = r["gamma"].as<double>();
    return run_theory_error(q, r["dataset"].as<std::string>(), r["data-dir"].as<std::string>(),
                            r.count("json") > 0);
  } catch (const cxxopts::exceptions::exception& e) {
    return usage_error("theory --error", e);
  }
}

}  // namespace stalesgd::cli
