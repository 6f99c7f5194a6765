// scale: the real-thread engine with many workers (P = 8, 64, 256) under exponential delays,
// every rule, against the runtime theory of docs/theory.md (closed form; Monte Carlo where there
// is none). Per cell: measured seconds per iteration in steady state (the updates of the first
// 5 E[X] dropped), its 95% confidence interval from 32 batch means, the relative error against
// the theory, the same cell on the virtual clock with the same seed (the same delay draws, no
// engine costs: virt/th is the sampling error, meas/vir the engine's), and the process's CPU
// seconds per wall second over the real run (getrusage), which shows what P mostly-sleeping
// threads and the server cost.
//
// Iteration counts: a short Monte-Carlo pilot of each cell (the same rule state machine the
// engine runs) gives the effective per-iteration coefficient of variation c (batch means, so
// the correlation between iterations of the async rules is included); the cell then runs
// n = (2.04 c / h)^2 iterations for a 95% half-width of h (default 2%) of the mean, at least
// --min-seconds of expected run time and 320 updates, at most --max-seconds. A cell still running
// at 3 times its planned time (the engine far slower than the theory) is stopped there.
//
//   scale [--data-dir data] [--workers 8,64,256] [--delay exp:mean=20ms] [--ci 0.02]
//         [--min-seconds 2] [--max-seconds 150] [--batch 32] [--seed 1] [--plan]
// --plan prints the cells, their theory and planned iterations and expected time, and exits.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "bench_common.hpp"
#include "stalesgd/data/catalog.hpp"
#include "stalesgd/engine/trainer.hpp"
#include "stalesgd/model/model.hpp"
#include "stalesgd/straggler/profile.hpp"

namespace {

using namespace stalesgd;
using namespace stalesgd::bench;

constexpr const char* kProgram = "scale";
constexpr Usage usage{kProgram,
                      "scale [--data-dir DIR] [--workers 8,64,256] [--delay SPEC] [--ci H] "
                      "[--min-seconds S] [--max-seconds S] [--batch B] [--seed S] [--plan]"};

struct Args : CellArgs {
  Args() : CellArgs{.ci = 0.02, .min_seconds = 2.0, .max_seconds = 150.0} {}
  std::string data_dir = "data";
  std::vector<int> workers = {8, 64, 256};
  std::string delay = "exp:mean=20ms";
};

Args parse(int argc, char** argv) {
  Args a;
  auto flags = cell_flags(a);
  flags.push_back({"--data-dir", &a.data_dir});
  flags.push_back({"--workers", [&](const std::string& v) {
                     a.workers.clear();
                     for (const auto& w : split_commas(v)) a.workers.push_back(std::stoi(w));
                   }});
  flags.push_back({"--delay", &a.delay});
  parse_flags(argc, argv, usage, flags);
  return a;
}

// The distinct cells for P workers at K in {1, P/4, P/2, P}.
std::vector<RuleSpec> cells_for(int p) {
  std::vector<int> ks;
  for (int k : {1, p / 4, p / 2, p}) {
    if (k >= 1 && std::find(ks.begin(), ks.end(), k) == ks.end()) ks.push_back(k);
  }
  return distinct_cells(p, ks);
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  const Dataset data = value_or_exit(kProgram, load_dataset("mnist", args.data_dir));
  ModelSpec softmax;
  auto model = make_model(softmax, data.train.shape, data.num_classes);
  const double grad_s = gradient_seconds(**model, data, args.batch).wall_s;

  struct Cell : PlannedCell {
    int p;
  };
  std::vector<Cell> cells;
  double planned_s = 0.0;
  for (int p : args.workers) {
    for (const auto& planned : plan_cells(kProgram, args.delay, p, cells_for(p), args, 200000)) {
      cells.push_back({planned, p});
      planned_s += planned.planned_seconds();
    }
  }
  fmt::print(
      "scale: softmax on mnist, batch {}, delay {} (pad), seed {}; one softmax gradient "
      "takes {:.1f} us on one thread; {} cells, planned {:.0f} s of runs "
      "(95% half-width target {:.1f}%); load average {}\n\n",
      args.batch, args.delay, args.seed, 1e6 * grad_s, cells.size(), planned_s, 100 * args.ci,
      load_average());
  if (args.plan) {
    fmt::print("{:>4} {:<14} {:>4} {:>12} {:<12} {:>6} {:>8} {:>8}\n", "P", "rule", "K", "theory s",
               "method", "cv", "iters", "est s");
    for (const auto& c : cells) {
      fmt::print("{:>4} {:<14} {:>4} {:>12.6f} {:<12} {:>6.3f} {:>8} {:>8.1f}\n", c.p, c.spec.name,
                 k_of(c.spec, c.p), c.theory.seconds,
                 c.theory.closed ? "closed form" : "monte carlo", c.theory.cv, c.n,
                 c.planned_seconds());
    }
    return 0;
  }

  fmt::print(
      "{:>4} {:<14} {:>4} {:>7} {:>10} {:>10} {:>7} {:>8} {:>5} {:>8} {:>8} {:>8} {:>8} "
      "{:>6}\n",
      "P", "rule", "K", "iters", "theory s", "measured", "±95%", "rel err", "5%", "virt/th",
      "meas/vir", "CPU/wall", "compute", "method");
  int met = 0, with_ci = 0;
  std::vector<std::string> misses;
  for (const auto& c : cells) {
    TrainerOptions o = run_options(data, softmax, c.spec, c.p, args.batch, args.delay);
    o.seed = args.seed;
    o.iterations = c.n + c.warm;
    // A cell that the engine makes far slower than the theory would run for many times its
    // planned time (P = 256 k-sync K = 1: about 100 times); stop it at 3 times the plan (at least
    // 10 s). It misses anyway, and its interval says how precisely.
    o.time_s = std::max(10.0, 3.0 * static_cast<double>(c.n + c.warm) * c.theory.seconds);
    tiny_eval(o);
    auto timed = timed_train(o, data);
    const double wall = timed.wall_s;
    const double cpu = timed.cpu_s;
    const RunRecord run = value_or_exit(kProgram, std::move(timed.run));
    // The same cell on the virtual clock: the same per-worker delay draws without the engine's
    // costs, so virt/th is the sampling error of these draws and meas/vir the engine's.
    o.clock = ClockKind::kVirtual;
    o.time_s = 0.0;
    o.iterations = run.updates.size();  // the same updates as the real run, even if it was cut
    const RunRecord virt = value_or_exit(kProgram, train(o, data));
    const Steady s = steady_state(run.updates, c.warm);
    const Steady v = steady_state(virt.updates, c.warm);
    std::uint64_t computed = 0;
    for (const auto& w : run.workers) computed += w.computed;
    const double err = s.mean / c.theory.seconds - 1.0;
    const bool ok = std::abs(err) <= 0.05;
    met += ok;
    with_ci += s.ci95 / s.mean <= 0.05;
    if (!ok) misses.push_back(fmt::format("P={} {} K={}", c.p, c.spec.name, k_of(c.spec, c.p)));
    // compute: the CPU the gradients alone need per wall second (gradients computed x one
    // gradient's single-thread time); CPU/wall above it is the engine's own cost.
    fmt::print(
        "{:>4} {:<14} {:>4} {:>7} {:>10.6f} {:>10.6f} {:>6.2f}% {:>+7.2f}% {:>5} {:>+7.2f}% "
        "{:>+7.2f}% {:>8.3f} {:>8.3f} {:>6}\n",
        c.p, c.spec.name, k_of(c.spec, c.p), s.iterations, c.theory.seconds, s.mean,
        100 * s.ci95 / s.mean, 100 * err, ok ? "ok" : "MISS",
        100 * (v.mean / c.theory.seconds - 1.0), 100 * (s.mean / v.mean - 1.0), cpu / wall,
        static_cast<double>(computed) * grad_s / wall, c.theory.closed ? "closed" : "MC");
    std::fflush(stdout);
  }
  fmt::print(
      "\n{} of {} cells within 5% of the theory; {} of {} with a 95% half-width under 5%; "
      "load average {}\n",
      met, cells.size(), with_ci, cells.size(), load_average());
  if (!misses.empty()) {
    std::string list;
    for (const auto& m : misses) list += (list.empty() ? "" : ", ") + m;
    fmt::print("missed: {}\n", list);
  }
  return 0;
}
