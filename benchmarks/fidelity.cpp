// fidelity: how closely the real-thread engine's time per iteration follows the runtime theory
// (docs/theory.md) for all six rules at P = 8, K in {1, 2, 4, 8}, under exponential and shifted-
// exponential delays. Each cell runs twice with the same seed: on real threads, and on the
// virtual clock (ClockKind::kVirtual), which replays the same per-worker delay draws on a
// discrete-event clock with no engine cost. So
//   measured / theory - 1  = what the user sees,
//   virtual  / theory - 1  = the sampling noise of those particular draws,
//   measured / virtual - 1 = the engine's own timing error (wake-up latency, compute, server),
// and (measured - virtual) per iteration is the engine's added time in microseconds.
// Also measured here: a timer's wake-up overshoot on this machine (the floor of that error) and
// one gradient's compute time. The last table shows the new-longer-than-used effect: under
// shifted-exponential delays k-async takes less time per iteration than k-sync at the same K.
//
// Iteration counts: as in benchmarks/scale.cpp, a Monte-Carlo pilot per cell gives the
// effective coefficient of variation c of an iteration; n = (2.04 c / h)^2 for a 95% half-width
// h (default 1.5%, well under the 3% target), between --min-seconds and --max-seconds.
//
//   fidelity [--data-dir data] [--workers 8] [--delay SPEC]... [--ci 0.015] [--min-seconds 3]
//            [--max-seconds 120] [--batch 32] [--seed 1] [--plan]
// Default delays: exp:mean=20ms and shifted-exp:shift=10ms,mean=10ms.
#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <random>
#include <string>
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

constexpr const char* kProgram = "fidelity";
constexpr Usage usage{kProgram,
                      "fidelity [--data-dir DIR] [--workers P] [--delay SPEC]... [--ci H] "
                      "[--min-seconds S] [--max-seconds S] [--batch B] [--seed S] [--plan]"};

struct Args : CellArgs {
  Args() : CellArgs{.ci = 0.015, .min_seconds = 3.0, .max_seconds = 120.0} {}
  std::string data_dir = "data";
  int workers = 8;
  std::vector<std::string> delays;
};

Args parse(int argc, char** argv) {
  Args a;
  auto flags = cell_flags(a);
  flags.push_back({"--data-dir", &a.data_dir});
  flags.push_back({"--workers", &a.workers});
  flags.push_back({"--delay", [&](const std::string& v) { a.delays.push_back(v); }});
  parse_flags(argc, argv, usage, flags);
  if (a.delays.empty()) a.delays = {"exp:mean=20ms", "shifted-exp:shift=10ms,mean=10ms"};
  return a;
}

// All six rules at K = 1, 2, 4, ..., P, once per distinct schedule: sync stands for k-sync and
// k-async at K = P; async for k-async and k-batch-async at K = 1; k-sync K=1 for k-batch-sync
// K=1 (the first gradient ends the round and cancels the rest).
std::vector<RuleSpec> cells_for(int p) {
  std::vector<int> ks;
  for (int k = 1; k < p; k *= 2) ks.push_back(k);
  ks.push_back(p);
  return distinct_cells(p, ks);
}

std::string alias(const RuleSpec& s, int p) {
  if (s.name == "sync") return fmt::format("= k-sync, k-async K={}", p);
  if (s.name == "async") return "= k-async, k-batch-async K=1";
  if (s.name == "k-sync" && s.k == 1) return "= k-batch-sync K=1";
  return "";
}

// How the theory was obtained, as the tables show it.
const char* method(const Theory& t) {
  return t.closed ? "closed" : "MC";
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

// How late a thread wakes from condition_variable::wait_until (what a worker does to sit out its
// delay), with the engine's timer slack of 1 ns, for random waits of 0.5-20 ms. Microseconds.
std::vector<double> wake_overshoot_us(int samples) {
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  std::mutex mu;
  std::condition_variable cv;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> wait_s(0.0005, 0.02);
  std::vector<double> late;
  for (int i = 0; i < samples; ++i) {
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(wait_s(rng)));
    std::unique_lock lock(mu);
    cv.wait_until(lock, deadline, [] { return false; });
    late.push_back(1e6 * std::chrono::duration<double>(Clock::now() - deadline).count());
  }
  prctl(PR_SET_TIMERSLACK, 50000UL, 0UL, 0UL, 0UL);
  return late;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  const Dataset data = value_or_exit(kProgram, load_dataset("mnist", args.data_dir));
  ModelSpec softmax;
  auto model = make_model(softmax, data.train.shape, data.num_classes);
  const double grad_s = gradient_seconds(**model, data, args.batch).wall_s;
  const auto late = wake_overshoot_us(400);
  double late_mean = 0.0;
  for (double v : late) late_mean += v;
  late_mean /= static_cast<double>(late.size());

  const int p = args.workers;
  struct Cell : PlannedCell {
    std::string delay;
    Steady real, virt;
  };
  std::vector<Cell> cells;
  double planned_s = 0.0;
  for (const auto& delay : args.delays) {
    for (const auto& planned : plan_cells(kProgram, delay, p, cells_for(p), args, 400000)) {
      cells.push_back({planned, delay, {}, {}});
      planned_s += planned.planned_seconds();
    }
  }
  fmt::print(
      "fidelity: P = {}, softmax on mnist, batch {}, pad mode, seed {}; {} cells, planned "
      "{:.0f} s of real-thread runs (95% half-width target {:.1f}%); load average {}\n",
      p, args.batch, args.seed, cells.size(), planned_s, 100 * args.ci, load_average());
  fmt::print(
      "one softmax gradient: {:.1f} us (one thread); timer wake-up overshoot over {} waits: "
      "median {:.0f} us, mean {:.0f} us, p90 {:.0f} us, p99 {:.0f} us\n\n",
      1e6 * grad_s, late.size(), quantile(late, 0.5), late_mean, quantile(late, 0.9),
      quantile(late, 0.99));
  if (args.plan) {
    for (const auto& c : cells) {
      fmt::print("{:<34} {:<14} K={:<3} theory {:.6f} ({}) cv {:.3f} iters {} est {:.1f} s\n",
                 c.delay, c.spec.name, k_of(c.spec, p), c.theory.seconds, method(c.theory),
                 c.theory.cv, c.n, c.planned_seconds());
    }
    return 0;
  }

  std::string current_delay;
  int met = 0;
  for (auto& c : cells) {
    if (c.delay != current_delay) {
      current_delay = c.delay;
      fmt::print("delay {}\n", c.delay);
      fmt::print(
          "{:<14} {:>3} {:>6} {:>10} {:>6} {:>10} {:>7} {:>10} {:>8} {:>8} {:>8} {:>8} {:>4}  "
          "{}\n",
          "rule", "K", "iters", "theory s", "method", "measured", "±95%", "virtual", "meas/th",
          "virt/th", "meas/vir", "+us/it", "3%", "note");
    }
    TrainerOptions o = run_options(data, softmax, c.spec, p, args.batch, c.delay);
    o.seed = args.seed;
    o.iterations = c.n + c.warm;
    tiny_eval(o);
    auto real = train(o, data);
    o.clock = ClockKind::kVirtual;
    auto virt = train(o, data);
    if (!real || !virt) {
      fail(kProgram, (!real ? real : virt).error().message);
    }
    c.real = steady_state(real->updates, c.warm);
    c.virt = steady_state(virt->updates, c.warm);
    const double e_meas = c.real.mean / c.theory.seconds - 1.0;
    const bool ok = std::abs(e_meas) <= 0.03;
    met += ok;
    std::string note = alias(c.spec, p);
    if (c.theory.bound) {
      note += (note.empty() ? "" : "; ") + fmt::format("bound {:.6f}", *c.theory.bound);
    }
    if (!c.theory.closed) {
      note += (note.empty() ? "" : "; ") +
              fmt::format("MC ±{:.2f}%", 100 * c.theory.ci95 / c.theory.seconds);
    }
    fmt::print(
        "{:<14} {:>3} {:>6} {:>10.6f} {:>6} {:>10.6f} {:>6.2f}% {:>10.6f} {:>+7.2f}% "
        "{:>+7.2f}% {:>+7.2f}% {:>8.0f} {:>4}  {}\n",
        c.spec.name, k_of(c.spec, p), c.real.iterations, c.theory.seconds, method(c.theory),
        c.real.mean, 100 * c.real.ci95 / c.real.mean, c.virt.mean, 100 * e_meas,
        100 * (c.virt.mean / c.theory.seconds - 1.0), 100 * (c.real.mean / c.virt.mean - 1.0),
        1e6 * (c.real.mean - c.virt.mean), ok ? "ok" : "MISS", note);
    std::fflush(stdout);
  }
  fmt::print("\n{} of {} cells within 3% of the theory; load average {}\n\n", met, cells.size(),
             load_average());

  // New-longer-than-used: k-async (async at K=1) against k-sync at the same K, measured.
  for (const auto& delay : args.delays) {
    std::map<std::pair<std::string, int>, const Cell*> by;
    for (const auto& c : cells) {
      if (c.delay == delay) by[{c.spec.name, k_of(c.spec, p)}] = &c;
    }
    fmt::print("k-async vs k-sync, delay {}:\n{:>3} {:>12} {:>12} {:>16} {:>16}\n", delay, "K",
               "k-sync s", "k-async s", "k-async/k-sync", "theory ratio");
    for (int k = 1; k < p; k *= 2) {
      const Cell* ks = by[{"k-sync", k}];
      const Cell* ka = k == 1 ? by[{"async", 1}] : by[{"k-async", k}];
      if (ks == nullptr || ka == nullptr) continue;
      fmt::print("{:>3} {:>12.6f} {:>12.6f} {:>16.3f} {:>16.3f}\n", k, ks->real.mean, ka->real.mean,
                 ka->real.mean / ks->real.mean, ka->theory.seconds / ks->theory.seconds);
    }
    fmt::print("\n");
  }
  return 0;
}
