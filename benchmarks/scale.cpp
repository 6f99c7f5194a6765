// scale: the real-thread engine with many workers (P = 8, 64, 256) under exponential delays,
// every rule, against the runtime theory of DESIGN.md §3 (closed form; Monte Carlo where there
// is none). Per cell: measured seconds per iteration in steady state (the updates of the first
// 5 E[X] dropped), its 95% confidence interval from 32 batch means, the relative error against
// the theory, the same cell on the virtual clock with the same seed (the same delay draws, no
// engine costs: virt/th is the sampling error, meas/vir the engine's), and the process's CPU
// seconds per wall second over the real run (getrusage), which shows what P mostly-sleeping
// threads and one server thread cost.
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
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "stalesgd/data/catalog.hpp"
#include "stalesgd/data/sampler.hpp"
#include "stalesgd/engine/trainer.hpp"
#include "stalesgd/model/model.hpp"
#include "stalesgd/straggler/profile.hpp"
#include "stalesgd/theory/runtime.hpp"
#include "stalesgd/util/seed.hpp"

namespace {

using namespace stalesgd;
using Clock = std::chrono::steady_clock;

struct Args {
  std::string data_dir = "data";
  std::vector<int> workers = {8, 64, 256};
  std::string delay = "exp:mean=20ms";
  double ci = 0.02;
  double min_seconds = 2.0;
  double max_seconds = 150.0;
  int batch = 32;
  std::uint64_t seed = 1;
  bool plan = false;
};

[[noreturn]] void usage(const std::string& what) {
  fmt::print(stderr,
             "scale: {}\nusage: scale [--data-dir DIR] [--workers 8,64,256] [--delay SPEC] "
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
      a.workers.clear();
      for (std::size_t s = 0, e; s <= v.size(); s = e + 1) {
        e = std::min(v.find(',', s), v.size());
        a.workers.push_back(std::stoi(v.substr(s, e - s)));
      }
    } else if (flag == "--delay") {
      a.delay = v;
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
  return a;
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// The distinct cells for P workers: sync, async, and k-sync, k-batch-sync, k-async,
// k-batch-async at K in {1, P/4, P/2, P}, minus those that schedule exactly like another:
// k-sync K=P and k-async K=P are sync; k-async K=1 and k-batch-async K=1 are async;
// k-batch-sync K=1 is k-sync K=1 (the first gradient ends the round and cancels the rest).
std::vector<RuleSpec> cells_for(int p) {
  std::vector<RuleSpec> cells = {{"sync", 0}, {"async", 0}};
  std::vector<int> ks;
  for (int k : {1, p / 4, p / 2, p}) {
    if (k >= 1 && std::find(ks.begin(), ks.end(), k) == ks.end()) ks.push_back(k);
  }
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

int k_of(const RuleSpec& s, int p) {
  return s.name == "sync" ? p : s.name == "async" ? 1 : s.k;
}

struct Theory {
  double seconds = 0.0;
  std::string method;  // "closed form" or "monte carlo"
  double cv = 0.0;     // effective per-iteration coefficient of variation (pilot)
};

Theory theory_for(const RuleSpec& spec, int p, const StragglerProfile& profile,
                  std::uint64_t seed) {
  Theory t;
  auto pilot = monte_carlo_runtime(spec, p, profile, 16000, seed + 1000);
  if (!pilot) {
    fmt::print(stderr, "scale: {}\n", pilot.error().message);
    std::exit(1);
  }
  t.cv = pilot->ci95 / 2.0395 * std::sqrt(static_cast<double>(pilot->iterations)) / pilot->seconds;
  const Distribution* x = profile.iid();
  auto closed = x ? closed_form_runtime(spec.name, p, k_of(spec, p), *x) : std::nullopt;
  if (closed && !closed->upper_bound) {
    t.seconds = closed->seconds;
    t.method = "closed form";
  } else {
    auto mc = monte_carlo_runtime(spec, p, profile, 200000, seed);
    t.seconds = mc->seconds;
    t.method = "monte carlo";
  }
  return t;
}

struct Steady {
  double mean = 0.0;  // seconds per iteration after the warm-up
  double ci95 = 0.0;  // half-width, 32 batch means
  std::size_t iterations = 0;
};

// Seconds per iteration from update `warm` on, with a 32-batch-means interval (the estimator of
// monte_carlo_runtime applied to measured update times). Index-based, so the real and the
// virtual run of a cell average over the same iterations.
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

std::string load_average() {
  double l[3] = {0, 0, 0};
  if (getloadavg(l, 3) < 0) return "?";
  return fmt::format("{:.2f} {:.2f} {:.2f}", l[0], l[1], l[2]);
}

// One thread's softmax gradient time at this batch size: what a run's gradients cost in CPU.
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
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  auto data = load_dataset("mnist", args.data_dir);
  if (!data) {
    fmt::print(stderr, "scale: {}\n", data.error().message);
    return 1;
  }
  ModelSpec softmax;
  auto model = make_model(softmax, data->train.shape, data->num_classes);
  const double grad_s = gradient_seconds(**model, *data, args.batch);

  struct Cell {
    int p;
    RuleSpec spec;
    Theory theory;
    std::uint64_t n;     // planned steady-state iterations
    std::uint64_t warm;  // updates dropped as warm-up: those of the first 5 E[X]
  };
  std::vector<Cell> cells;
  double planned_s = 0.0;
  for (int p : args.workers) {
    auto profile = StragglerProfile::parse(args.delay, p);
    if (!profile) {
      fmt::print(stderr, "scale: {}\n", profile.error().message);
      return 1;
    }
    const double mean_x = profile->iid() ? profile->iid()->mean() : 0.02;
    for (const auto& spec : cells_for(p)) {
      Cell c{p, spec, theory_for(spec, p, *profile, args.seed), 0, 0};
      const double e = c.theory.seconds;
      double n = std::pow(2.0395 * c.theory.cv / args.ci, 2.0);
      n = std::max({n, 32.0 * 10, args.min_seconds / e});
      n = std::min(n, std::max(320.0, args.max_seconds / e));
      c.n = static_cast<std::uint64_t>(std::ceil(n));
      c.warm = static_cast<std::uint64_t>(std::ceil(5.0 * mean_x / e)) + 1;
      planned_s += static_cast<double>(c.n + c.warm) * e;
      cells.push_back(c);
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
                 k_of(c.spec, c.p), c.theory.seconds, c.theory.method, c.theory.cv, c.n,
                 static_cast<double>(c.n + c.warm) * c.theory.seconds);
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
    TrainerOptions o;
    o.dataset = data->name;
    o.model = softmax;
    o.rule = c.spec;
    o.workers = c.p;
    o.batch = args.batch;
    o.lr = 0.01;
    o.delay = args.delay;
    o.seed = args.seed;
    o.iterations = c.n + c.warm;
    // A cell that the engine makes far slower than the theory would run for many times its
    // planned time (P = 256 k-sync K = 1: about 100 times); stop it at 3 times the plan (at least
    // 10 s). It misses anyway, and its interval says how precisely.
    o.time_s = std::max(10.0, 3.0 * static_cast<double>(c.n + c.warm) * c.theory.seconds);
    o.eval_every_s = 1e6;  // one tiny snapshot at t = 0: evaluation is not what is measured
    o.eval_test_samples = 100;
    o.eval_train_samples = 100;
    o.progress = false;
    const double cpu0 = cpu_seconds();
    const auto t0 = Clock::now();
    auto run = train(o, *data);
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    const double cpu = cpu_seconds() - cpu0;
    // The same cell on the virtual clock: the same per-worker delay draws without the engine's
    // costs, so virt/th is the sampling error of these draws and meas/vir the engine's.
    if (!run) {
      fmt::print(stderr, "scale: {}\n", run.error().message);
      return 1;
    }
    o.clock = ClockKind::kVirtual;
    o.time_s = 0.0;
    o.iterations = run->updates.size();  // the same updates as the real run, even if it was cut
    auto virt = train(o, *data);
    if (!virt) {
      fmt::print(stderr, "scale: {}\n", virt.error().message);
      return 1;
    }
    const Steady s = steady_state(run->updates, c.warm);
    const Steady v = steady_state(virt->updates, c.warm);
    std::uint64_t computed = 0;
    for (const auto& w : run->workers) computed += w.computed;
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
        static_cast<double>(computed) * grad_s / wall,
        c.theory.method == "closed form" ? "closed" : "MC");
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
