// fidelity: how closely the real-thread engine's time per iteration follows the runtime theory
// (DESIGN.md §3) for all six rules at P = 8, K in {1, 2, 4, 8}, under exponential and shifted-
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
#include <cstdlib>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "stalesgd/data/catalog.hpp"
#include "stalesgd/data/sampler.hpp"
#include "stalesgd/engine/trainer.hpp"
#include "stalesgd/model/model.hpp"
#include "stalesgd/straggler/profile.hpp"
#include "stalesgd/theory/runtime.hpp"

namespace {

using namespace stalesgd;
using Clock = std::chrono::steady_clock;

struct Args {
  std::string data_dir = "data";
  int workers = 8;
  std::vector<std::string> delays;
  double ci = 0.015;
  double min_seconds = 3.0;
  double max_seconds = 120.0;
  int batch = 32;
  std::uint64_t seed = 1;
  bool plan = false;
};

[[noreturn]] void usage(const std::string& what) {
  fmt::print(stderr,
             "fidelity: {}\nusage: fidelity [--data-dir DIR] [--workers P] [--delay SPEC]... "
             "[--ci H] [--min-seconds S] [--max-seconds S] [--batch B] [--seed S] [--plan]\n",
             what);
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "-h" || flag == "--help") usage("help");
    if (flag == "--plan") {
      a.plan = true;
      continue;
    }
    if (i + 1 >= argc) usage("missing value for " + flag);
    const std::string v = argv[++i];
    if (flag == "--data-dir") {
      a.data_dir = v;
    } else if (flag == "--workers") {
      a.workers = std::stoi(v);
    } else if (flag == "--delay") {
      a.delays.push_back(v);
    } else if (flag == "--ci") {
      a.ci = std::stod(v);
    } else if (flag == "--min-seconds") {
      a.min_seconds = std::stod(v);
    } else if (flag == "--max-seconds") {
      a.max_seconds = std::stod(v);
    } else if (flag == "--batch") {
      a.batch = std::stoi(v);
    } else if (flag == "--seed") {
      a.seed = std::stoull(v);
    } else {
      usage("unknown flag " + flag);
    }
  }
  if (a.delays.empty()) a.delays = {"exp:mean=20ms", "shifted-exp:shift=10ms,mean=10ms"};
  return a;
}

int k_of(const RuleSpec& s, int p) {
  return s.name == "sync" ? p : s.name == "async" ? 1 : s.k;
}

// All six rules at K = 1, 2, 4, ..., P, once per distinct schedule: sync stands for k-sync and
// k-async at K = P; async for k-async and k-batch-async at K = 1; k-sync K=1 for k-batch-sync
// K=1 (the first gradient ends the round and cancels the rest).
std::vector<RuleSpec> cells_for(int p) {
  std::vector<int> ks;
  for (int k = 1; k < p; k *= 2) ks.push_back(k);
  ks.push_back(p);
  std::vector<RuleSpec> cells = {{"sync", 0}, {"async", 0}};
  for (const char* rule : {"k-sync", "k-batch-sync", "k-async", "k-batch-async"}) {
    const std::string r = rule;
    for (int k : ks) {
      if (k == p && (r == "k-sync" || r == "k-async")) continue;
      if (k == 1 && (r == "k-async" || r == "k-batch-async" || r == "k-batch-sync")) continue;
      cells.push_back({r, k});
    }
  }
  return cells;
}

std::string alias(const RuleSpec& s, int p) {
  if (s.name == "sync") return fmt::format("= k-sync, k-async K={}", p);
  if (s.name == "async") return "= k-async, k-batch-async K=1";
  if (s.name == "k-sync" && s.k == 1) return "= k-batch-sync K=1";
  return "";
}

struct Theory {
  double seconds = 0.0;
  double ci95 = 0.0;   // Monte Carlo only
  std::string method;  // "closed" or "MC"
  std::string note;    // e.g. the k-async bound
  double cv = 0.0;     // pilot: effective per-iteration coefficient of variation
};

Theory theory_for(const RuleSpec& spec, int p, const StragglerProfile& profile,
                  std::uint64_t seed) {
  Theory t;
  auto pilot = monte_carlo_runtime(spec, p, profile, 16000, seed + 1000);
  if (!pilot) {
    fmt::print(stderr, "fidelity: {}\n", pilot.error().message);
    std::exit(1);
  }
  t.cv = pilot->ci95 / 2.0395 * std::sqrt(static_cast<double>(pilot->iterations)) / pilot->seconds;
  const Distribution* x = profile.iid();
  auto closed = x ? closed_form_runtime(spec.name, p, k_of(spec, p), *x) : std::nullopt;
  if (closed && !closed->upper_bound) {
    t.seconds = closed->seconds;
    t.method = "closed";
  } else {
    auto mc = monte_carlo_runtime(spec, p, profile, 400000, seed);
    t.seconds = mc->seconds;
    t.ci95 = mc->ci95;
    t.method = "MC";
    if (closed) t.note = fmt::format("bound {:.6f}", closed->seconds);
  }
  return t;
}

struct Steady {
  double mean = 0.0;  // seconds per iteration after the warm-up
  double ci95 = 0.0;  // half-width, 32 batch means
  std::size_t iterations = 0;
};

// Seconds per iteration from update `warm` on, with a 32-batch-means interval (the estimator
// of monte_carlo_runtime applied to measured update times). Index-based, so a real and a
// virtual run of the same cell average over the same iterations.
Steady steady_state(const std::vector<UpdateRecord>& u, std::size_t warm) {
  constexpr std::size_t kBatches = 32;
  Steady s;
  if (u.size() < warm + 2) return s;
  const std::size_t n = u.size() - 1 - warm;
  s.iterations = n;
  s.mean = (u.back().wall_s - u[warm].wall_s) / static_cast<double>(n);
  const std::size_t per = n / kBatches;
  if (per == 0) return s;
  std::vector<double> means;
  for (std::size_t b = 0; b < kBatches; ++b) {
    means.push_back((u[warm + (b + 1) * per].wall_s - u[warm + b * per].wall_s) /
                    static_cast<double>(per));
  }
  double m = 0.0, var = 0.0;
  for (double v : means) m += v;
  m /= kBatches;
  for (double v : means) var += (v - m) * (v - m);
  var /= kBatches - 1;
  s.ci95 = 2.0395 * std::sqrt(var / kBatches);  // Student t, 31 degrees of freedom
  return s;
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

double gradient_seconds(const Model& model, const Dataset& data, int batch) {
  std::vector<float> w(model.num_params()), g(model.num_params());
  model.init_params(w, 3);
  auto ws = model.make_workspace(batch);
  MinibatchSampler sampler(data.train, batch, 11);
  std::vector<double> times;
  for (int rep = 0; rep < 7; ++rep) {
    const auto t0 = Clock::now();
    for (int i = 0; i < 200; ++i) (void)model.loss_and_gradient(w, sampler.next(), g, *ws);
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / 200);
  }
  return quantile(times, 0.5);
}

std::string load_average() {
  double l[3] = {0, 0, 0};
  if (getloadavg(l, 3) < 0) return "?";
  return fmt::format("{:.2f} {:.2f} {:.2f}", l[0], l[1], l[2]);
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  auto data = load_dataset("mnist", args.data_dir);
  if (!data) {
    fmt::print(stderr, "fidelity: {}\n", data.error().message);
    return 1;
  }
  ModelSpec softmax;
  auto model = make_model(softmax, data->train.shape, data->num_classes);
  const double grad_s = gradient_seconds(**model, *data, args.batch);
  const auto late = wake_overshoot_us(400);
  double late_mean = 0.0;
  for (double v : late) late_mean += v;
  late_mean /= static_cast<double>(late.size());

  const int p = args.workers;
  struct Cell {
    std::string delay;
    RuleSpec spec;
    Theory theory;
    std::uint64_t n = 0, warm = 0;
    Steady real, virt;
  };
  std::vector<Cell> cells;
  double planned_s = 0.0;
  for (const auto& delay : args.delays) {
    auto profile = StragglerProfile::parse(delay, p);
    if (!profile) {
      fmt::print(stderr, "fidelity: {}\n", profile.error().message);
      return 1;
    }
    const double mean_x = profile->iid() ? profile->iid()->mean() : 0.02;
    for (const auto& spec : cells_for(p)) {
      Cell c;
      c.delay = delay;
      c.spec = spec;
      c.theory = theory_for(spec, p, *profile, args.seed);
      const double e = c.theory.seconds;
      double n = std::pow(2.0395 * c.theory.cv / args.ci, 2.0);
      n = std::clamp(std::max(n, args.min_seconds / e), 320.0,
                     std::max(320.0, args.max_seconds / e));
      c.n = static_cast<std::uint64_t>(std::ceil(n));
      c.warm = static_cast<std::uint64_t>(std::ceil(5.0 * mean_x / e)) + 1;
      planned_s += static_cast<double>(c.n + c.warm) * e;
      cells.push_back(c);
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
                 c.delay, c.spec.name, k_of(c.spec, p), c.theory.seconds, c.theory.method,
                 c.theory.cv, c.n, static_cast<double>(c.n + c.warm) * c.theory.seconds);
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
    TrainerOptions o;
    o.dataset = data->name;
    o.model = softmax;
    o.rule = c.spec;
    o.workers = p;
    o.batch = args.batch;
    o.lr = 0.01;
    o.delay = c.delay;
    o.seed = args.seed;
    o.iterations = c.n + c.warm;
    o.eval_every_s = 1e6;  // one tiny snapshot at t = 0: evaluation is not what is measured
    o.eval_test_samples = 100;
    o.eval_train_samples = 100;
    o.progress = false;
    auto real = train(o, *data);
    o.clock = ClockKind::kVirtual;
    auto virt = train(o, *data);
    if (!real || !virt) {
      fmt::print(stderr, "fidelity: {}\n", (!real ? real : virt).error().message);
      return 1;
    }
    c.real = steady_state(real->updates, c.warm);
    c.virt = steady_state(virt->updates, c.warm);
    const double e_meas = c.real.mean / c.theory.seconds - 1.0;
    const bool ok = std::abs(e_meas) <= 0.03;
    met += ok;
    std::string note = alias(c.spec, p);
    if (!c.theory.note.empty()) note += (note.empty() ? "" : "; ") + c.theory.note;
    if (c.theory.method == "MC") {
      note += (note.empty() ? "" : "; ") +
              fmt::format("MC ±{:.2f}%", 100 * c.theory.ci95 / c.theory.seconds);
    }
    fmt::print(
        "{:<14} {:>3} {:>6} {:>10.6f} {:>6} {:>10.6f} {:>6.2f}% {:>10.6f} {:>+7.2f}% "
        "{:>+7.2f}% {:>+7.2f}% {:>8.0f} {:>4}  {}\n",
        c.spec.name, k_of(c.spec, p), c.real.iterations, c.theory.seconds, c.theory.method,
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
