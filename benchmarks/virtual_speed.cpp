// virtual_speed: how fast the virtual-clock engine (ClockKind::kVirtual) simulates a
// delay-dominated run, P = 8, exp:mean=50ms, softmax, a few rules: virtual seconds simulated
// per real (wall) second and per CPU second, with evaluation reduced to one tiny snapshot and
// with the default evaluation (a snapshot every 0.5 virtual s on the whole test split). Each
// configuration runs --reps times (median). The virtual engine computes a real gradient for
// every arrival, so its speed is about (virtual time per gradient) / (one gradient's compute
// time); the table shows that bound too. Then two runs with the same seed must give identical
// RunRecords: every update, gradient, evaluation and worker row and the final parameters, bit
// for bit.
//
//   virtual_speed [--data-dir data] [--virtual-seconds 300] [--reps 3] [--batch 32] [--seed 1]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "bench_common.hpp"
#include "stalesgd/data/catalog.hpp"
#include "stalesgd/engine/trainer.hpp"
#include "stalesgd/model/model.hpp"
#include "stalesgd/straggler/profile.hpp"
#include "stalesgd/theory/runtime.hpp"

namespace {

using namespace stalesgd;
using namespace stalesgd::bench;

constexpr const char* kProgram = "virtual_speed";
constexpr Usage usage{kProgram,
                      "virtual_speed [--data-dir DIR] [--virtual-seconds S] [--reps R] "
                      "[--batch B] [--seed S]"};

struct Args {
  std::string data_dir = "data";
  double virtual_seconds = 300.0;
  int reps = 3;
  int batch = 32;
  std::uint64_t seed = 1;
};

Args parse(int argc, char** argv) {
  Args a;
  parse_flags(argc, argv, usage,
              {{"--data-dir", &a.data_dir},
               {"--virtual-seconds", &a.virtual_seconds},
               {"--reps", &a.reps},
               {"--batch", &a.batch},
               {"--seed", &a.seed}});
  return a;
}

// Field-by-field equality, floats compared bit for bit (memcmp), so -0/+0 or NaN payloads
// would count as differences too. Returns "" or the first difference.
std::string compare(const RunRecord& a, const RunRecord& b) {
  auto same_bits = [](const auto& x, const auto& y) { return std::memcmp(&x, &y, sizeof x) == 0; };
  if (a.updates.size() != b.updates.size()) return "number of updates";
  for (std::size_t i = 0; i < a.updates.size(); ++i) {
    const auto &x = a.updates[i], &y = b.updates[i];
    if (x.iteration != y.iteration || !same_bits(x.wall_s, y.wall_s) || x.n_grads != y.n_grads ||
        !same_bits(x.mean_staleness, y.mean_staleness) || x.max_staleness != y.max_staleness ||
        !same_bits(x.lr, y.lr) || !same_bits(x.minibatch_loss, y.minibatch_loss)) {
      return fmt::format("update row {}", i);
    }
  }
  if (a.gradients.size() != b.gradients.size()) return "number of gradient rows";
  for (std::size_t i = 0; i < a.gradients.size(); ++i) {
    const auto &x = a.gradients[i], &y = b.gradients[i];
    if (x.iteration != y.iteration || x.worker != y.worker || x.computed_on != y.computed_on ||
        x.staleness != y.staleness || !same_bits(x.duration_s, y.duration_s)) {
      return fmt::format("gradient row {}", i);
    }
  }
  if (a.evals.size() != b.evals.size()) return "number of evaluations";
  for (std::size_t i = 0; i < a.evals.size(); ++i) {
    const auto &x = a.evals[i], &y = b.evals[i];
    if (!same_bits(x.wall_s, y.wall_s) || x.iteration != y.iteration ||
        !same_bits(x.train_loss, y.train_loss) || !same_bits(x.test_loss, y.test_loss) ||
        !same_bits(x.test_error, y.test_error)) {
      return fmt::format("evaluation row {}", i);
    }
  }
  if (a.workers.size() != b.workers.size()) return "number of worker rows";
  for (std::size_t i = 0; i < a.workers.size(); ++i) {
    const auto &x = a.workers[i], &y = b.workers[i];
    if (x.worker != y.worker || x.started != y.started || x.pushed != y.pushed ||
        x.applied != y.applied || x.cancelled != y.cancelled || !same_bits(x.busy_s, y.busy_s) ||
        !same_bits(x.idle_s, y.idle_s)) {
      return fmt::format("worker row {}", i);
    }
  }
  if (!same_bits(a.wall_s, b.wall_s)) return "wall_s";
  if (a.stop_reason != b.stop_reason) return "stop_reason";
  if (a.param_buffers != b.param_buffers || a.num_params != b.num_params) return "buffers/params";
  if (a.final_params.size() != b.final_params.size() ||
      std::memcmp(a.final_params.data(), b.final_params.data(),
                  a.final_params.size() * sizeof(float)) != 0) {
    return "final parameters";
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  const Dataset data = value_or_exit(kProgram, load_dataset("mnist", args.data_dir));
  const int p = 8;
  const std::string delay = "exp:mean=50ms";
  ModelSpec softmax;
  auto model = make_model(softmax, data.train.shape, data.num_classes);
  const std::vector<RuleSpec> rules = {
      {"sync", 0}, {"async", 0}, {"k-sync", 4}, {"k-batch-async", 4}};

  auto options = [&](const RuleSpec& rule, bool full_eval) {
    TrainerOptions o = run_options(data, softmax, rule, p, args.batch, delay);
    o.seed = args.seed;
    o.clock = ClockKind::kVirtual;
    o.time_s = args.virtual_seconds;
    if (!full_eval) tiny_eval(o);  // one snapshot at t = 0 (and the final one)
    return o;
  };

  const auto [grad_wall, grad_cpu] = gradient_seconds(**model, data, args.batch);
  fmt::print(
      "virtual_speed: P = {}, {}, softmax on mnist, batch {}, {:.0f} virtual s per run, "
      "median of {} runs; one softmax gradient takes {:.1f} us wall, {:.1f} us CPU on one "
      "thread; load average {}\n\n",
      p, delay, args.batch, args.virtual_seconds, args.reps, 1e6 * grad_wall, 1e6 * grad_cpu,
      load_average());
  fmt::print("{:<14} {:>3} {:>9} {:>11}  {:>12} {:>12} {:>14}  {:>12} {:>12}\n", "rule", "K",
             "updates", "gradients", "virt s/wall", "virt s/CPU", "grad bound", "with evals",
             "MC, no grads");
  bool all_fast = true;
  for (const auto& rule : rules) {
    std::vector<double> per_wall, per_cpu, per_wall_eval;
    std::size_t updates = 0, grads = 0;
    for (int rep = 0; rep < args.reps; ++rep) {
      for (bool full_eval : {false, true}) {
        const auto o = options(rule, full_eval);
        auto timed = timed_train(o, data);
        const double wall = timed.wall_s;
        const double cpu = timed.cpu_s;
        const RunRecord run = value_or_exit(kProgram, std::move(timed.run));
        if (full_eval) {
          per_wall_eval.push_back(run.wall_s / wall);
        } else {
          per_wall.push_back(run.wall_s / wall);
          per_cpu.push_back(run.wall_s / cpu);
          updates = run.updates.size();
          grads = run.gradients.size();
        }
      }
    }
    // The engine computes one gradient per arrival that is kept: at best it runs at
    // (virtual seconds per such gradient) / (one gradient's CPU time).
    const double bound = args.virtual_seconds / static_cast<double>(grads) / grad_cpu;
    // The same schedule without gradients: Monte Carlo over the bare rule (the theory's engine),
    // 20x as many updates so that its time is measurable.
    auto profile = StragglerProfile::parse(delay, p);
    const auto t0 = Clock::now();
    auto mc = monte_carlo_runtime(*resolve_rule(rule, p), *profile, 20 * updates, args.seed);
    const double mc_wall = seconds_since(t0);
    const double mc_speed = mc->seconds * static_cast<double>(mc->iterations) / mc_wall;
    all_fast = all_fast && median(per_wall) >= 100.0;
    fmt::print(
        "{:<14} {:>3} {:>9} {:>11}  {:>11.0f}x {:>11.0f}x {:>13.0f}x  {:>11.0f}x {:>11.0f}x\n",
        rule.name, k_of(rule, p), updates, grads, median(per_wall), median(per_cpu), bound,
        median(per_wall_eval), mc_speed);
  }
  fmt::print(
      "target >= 100x virtual seconds per real second (training only): {}; load average {}\n\n",
      all_fast ? "met" : "MISSED", load_average());

  // Determinism: the same options twice, for every rule, with the default evaluation.
  bool identical = true;
  for (const auto& rule : rules) {
    auto o = options(rule, true);
    o.time_s = std::min(args.virtual_seconds, 60.0);
    auto a = train(o, data);
    auto b = train(o, data);
    const std::string diff = compare(*a, *b);
    fmt::print(
        "same seed twice, {} ({} updates, {} gradient rows, {} evaluations, {} params): {}\n",
        rule.name, a->updates.size(), a->gradients.size(), a->evals.size(), a->final_params.size(),
        diff.empty() ? "identical RunRecords" : "DIFFER at " + diff);
    identical = identical && diff.empty();
  }
  return identical ? 0 : 1;
}
