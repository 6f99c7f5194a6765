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
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <utility>
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
  double virtual_seconds = 300.0;
  int reps = 3;
  int batch = 32;
  std::uint64_t seed = 1;
};

[[noreturn]] void usage(const std::string& what) {
  fmt::print(stderr,
             "virtual_speed: {}\nusage: virtual_speed [--data-dir DIR] [--virtual-seconds S] "
             "[--reps R] [--batch B] [--seed S]\n",
             what);
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "-h" || flag == "--help") usage("help");
    if (i + 1 >= argc) usage("missing value for " + flag);
    const std::string v = argv[++i];
    if (flag == "--data-dir") {
      a.data_dir = v;
    } else if (flag == "--virtual-seconds") {
      a.virtual_seconds = std::stod(v);
    } else if (flag == "--reps") {
      a.reps = std::stoi(v);
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

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
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
        x.staleness != y.staleness) {
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

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// One softmax gradient (with its minibatch gather): {wall, CPU} seconds, medians of 7 x 200.
std::pair<double, double> gradient_seconds(const Model& model, const Dataset& data, int batch) {
  std::vector<float> w(model.num_params()), g(model.num_params());
  model.init_params(w, 3);
  auto ws = model.make_workspace(batch);
  MinibatchSampler sampler(data.train, batch, 11);
  std::vector<double> wall, cpu;
  for (int rep = 0; rep < 7; ++rep) {
    const auto t0 = Clock::now();
    const double c0 = thread_cpu_seconds();
    for (int i = 0; i < 200; ++i) (void)model.loss_and_gradient(w, sampler.next(), g, *ws);
    cpu.push_back((thread_cpu_seconds() - c0) / 200);
    wall.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / 200);
  }
  return {median(wall), median(cpu)};
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
    fmt::print(stderr, "virtual_speed: {}\n", data.error().message);
    return 1;
  }
  const int p = 8;
  const std::string delay = "exp:mean=50ms";
  ModelSpec softmax;
  auto model = make_model(softmax, data->train.shape, data->num_classes);
  const std::vector<RuleSpec> rules = {
      {"sync", 0}, {"async", 0}, {"k-sync", 4}, {"k-batch-async", 4}};

  auto options = [&](const RuleSpec& rule, bool full_eval) {
    TrainerOptions o;
    o.dataset = data->name;
    o.model = softmax;
    o.rule = rule;
    o.workers = p;
    o.batch = args.batch;
    o.lr = 0.01;
    o.delay = delay;
    o.seed = args.seed;
    o.clock = ClockKind::kVirtual;
    o.time_s = args.virtual_seconds;
    o.progress = false;
    if (!full_eval) {
      o.eval_every_s = 1e6;  // one snapshot at t = 0 (and the final one), 100 samples each
      o.eval_test_samples = 100;
      o.eval_train_samples = 100;
    }
    return o;
  };

  const auto [grad_wall, grad_cpu] = gradient_seconds(**model, *data, args.batch);
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
        const double cpu0 = cpu_seconds();
        const auto t0 = Clock::now();
        auto run = train(o, *data);
        const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
        const double cpu = cpu_seconds() - cpu0;
        if (!run) {
          fmt::print(stderr, "virtual_speed: {}\n", run.error().message);
          return 1;
        }
        if (full_eval) {
          per_wall_eval.push_back(run->wall_s / wall);
        } else {
          per_wall.push_back(run->wall_s / wall);
          per_cpu.push_back(run->wall_s / cpu);
          updates = run->updates.size();
          grads = run->gradients.size();
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
    auto mc = monte_carlo_runtime(rule, p, *profile, 20 * updates, args.seed);
    const double mc_wall = std::chrono::duration<double>(Clock::now() - t0).count();
    const double mc_speed = mc->seconds * static_cast<double>(mc->iterations) / mc_wall;
    all_fast = all_fast && median(per_wall) >= 100.0;
    fmt::print(
        "{:<14} {:>3} {:>9} {:>11}  {:>11.0f}x {:>11.0f}x {:>13.0f}x  {:>11.0f}x {:>11.0f}x\n",
        rule.name,
        rule.name == "sync"    ? p
        : rule.name == "async" ? 1
                               : rule.k,
        updates, grads, median(per_wall), median(per_cpu), bound, median(per_wall_eval), mc_speed);
  }
  fmt::print(
      "target >= 100x virtual seconds per real second (training only): {}; load average {}\n\n",
      all_fast ? "met" : "MISSED", load_average());

  // Determinism: the same options twice, for every rule, with the default evaluation.
  bool identical = true;
  for (const auto& rule : rules) {
    auto o = options(rule, true);
    o.time_s = std::min(args.virtual_seconds, 60.0);
    auto a = train(o, *data);
    auto b = train(o, *data);
    const std::string diff = compare(*a, *b);
    fmt::print(
        "same seed twice, {} ({} updates, {} gradient rows, {} evaluations, {} params): {}\n",
        rule.name, a->updates.size(), a->gradients.size(), a->evals.size(), a->final_params.size(),
        diff.empty() ? "identical RunRecords" : "DIFFER at " + diff);
    identical = identical && diff.empty();
  }
  return identical ? 0 : 1;
}
