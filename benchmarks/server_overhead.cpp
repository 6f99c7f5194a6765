// server_overhead: what the parameter server costs, for each server placement (--server inline,
// thread, hogwild). Part 1, no injected delay: gradients applied per second with 2 workers
// (rules async and sync; hogwild is async only) against the ideal, 2 x the rate of one thread
// running a worker's loop (MinibatchSampler::next + Model::loss_and_gradient + w -= lr * g)
// measured in the same run, and against two such loops side by side without a server (what 2
// threads on this machine can really do). The measurements are interleaved (rotating order) for
// several repetitions; the table shows medians of the per-repetition ratios, so a clock drift
// common to one repetition cancels. Part 2, P = 8 workers with `exp:mean=5ms`: measured seconds
// per iteration against the runtime theory's, per placement (delay-dominated: what the
// placement costs when workers mostly sleep).
//
//   server_overhead [--data-dir data] [--models softmax,mlp] [--batch 64] [--reps 7]
//                   [--seconds 1.5] [--warmup 0.2] [--delayed-seconds 3] [--delayed-reps 3]
//                   [--only single|pair|inline-async|inline-sync|thread-async|thread-sync|
//                           hogwild-async]
// --only runs one kind of measurement (for `perf record` / `perf stat`) and prints its rate.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <Eigen/Core>

#include "bench_common.hpp"
#include "stalesgd/config/resolved_run.hpp"
#include "stalesgd/data/catalog.hpp"
#include "stalesgd/data/sampler.hpp"
#include "stalesgd/engine/trainer.hpp"
#include "stalesgd/model/model.hpp"
#include "stalesgd/theory/runtime.hpp"
#include "stalesgd/util/seed.hpp"

namespace {

using namespace stalesgd;
using namespace stalesgd::bench;

constexpr const char* kProgram = "server_overhead";
constexpr Usage usage{kProgram,
                      "server_overhead [--data-dir DIR] [--models softmax,mlp] [--batch B] "
                      "[--reps R] [--seconds S] [--warmup S] [--delayed-seconds S] "
                      "[--delayed-reps R] [--only KIND]"};

struct Args {
  std::string data_dir = "data";
  std::vector<std::string> models = {"softmax", "mlp"};
  int batch = 64;
  int reps = 7;
  double seconds = 1.5;          // per measurement
  double warmup = 0.2;           // seconds of each engine run left out of its rate
  double delayed_seconds = 3.0;  // part 2: seconds per run
  int delayed_reps = 3;          // part 2: runs per placement and rule
  std::string only;              // one kind (see kKindNames): run just that, for perf/profiling
};

Args parse(int argc, char** argv) {
  Args a;
  parse_flags(argc, argv, usage,
              {{"--data-dir", &a.data_dir},
               {"--models", [&](const std::string& v) { a.models = split_commas(v); }},
               {"--batch", &a.batch},
               {"--reps", &a.reps},
               {"--seconds", &a.seconds},
               {"--warmup", &a.warmup},
               {"--delayed-seconds", &a.delayed_seconds},
               {"--delayed-reps", &a.delayed_reps},
               {"--only", &a.only}});
  return a;
}

// One measurement: a rate and the CPU time it cost.
struct Measure {
  double rate = 0.0;           // gradients (applied, for the engine) per wall second
  double cpu_per_grad = 0.0;   // CPU seconds (all threads) per gradient
  double worker_idle = 0.0;    // engine: mean fraction of a worker's time waiting for the server
  double us_per_update = 0.0;  // engine: wall microseconds per server update (steady state)
  double gradients = 0.0;      // gradients in the whole measurement (applied, for the engine)
};

// A worker's loop without a server, for `seconds`. `go` lines up the start when two loops run
// side by side.
Measure worker_loop(const Model& model, const Dataset& data, int batch, double seconds, int stream,
                    const std::atomic<bool>* go) {
  std::vector<float> w(model.num_params()), grad(model.num_params());
  model.init_params(w, 7);
  auto ws = model.make_workspace(batch);
  MinibatchSampler sampler(data.train, batch, derive_seed(1, SeedStream::kSampler, stream));
  Eigen::Map<Eigen::VectorXf> wv(w.data(), static_cast<Eigen::Index>(w.size()));
  Eigen::Map<const Eigen::VectorXf> gv(grad.data(), static_cast<Eigen::Index>(grad.size()));
  if (go != nullptr) {
    while (!go->load(std::memory_order_acquire)) std::this_thread::yield();
  }
  const double cpu0 = thread_cpu_seconds();
  const auto start = Clock::now();
  const auto end =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  std::uint64_t steps = 0;
  Clock::time_point now;
  do {
    const Batch b = sampler.next();
    (void)model.loss_and_gradient(w, b, grad, *ws);
    wv.noalias() -= 0.01f * gv;
    ++steps;
    now = Clock::now();
  } while (now < end);
  Measure m;
  m.rate = static_cast<double>(steps) / std::chrono::duration<double>(now - start).count();
  m.cpu_per_grad = (thread_cpu_seconds() - cpu0) / static_cast<double>(steps);
  m.gradients = static_cast<double>(steps);
  return m;
}

Measure worker_pair(const Model& model, const Dataset& data, int batch, double seconds) {
  // release/acquire: the flag only lines up the two starts; no data rides on it.
  std::atomic<bool> go{false};
  Measure m1;
  std::thread t([&] { m1 = worker_loop(model, data, batch, seconds, 1, &go); });
  go.store(true, std::memory_order_release);
  const Measure m0 = worker_loop(model, data, batch, seconds, 0, &go);
  t.join();
  Measure m;
  m.rate = m0.rate + m1.rate;
  m.gradients = m0.gradients + m1.gradients;
  // Per-gradient CPU of the two loops, weighted by the gradients each did.
  m.cpu_per_grad = (m0.cpu_per_grad * m0.rate + m1.cpu_per_grad * m1.rate) / m.rate;
  return m;
}

Measure engine(const Dataset& data, const ModelSpec& model, const std::string& rule,
               ServerPlacement server, const Args& a) {
  TrainerOptions o = run_options(data, model, {rule, 0}, 2, a.batch, "none");
  o.server = server;
  o.time_s = a.seconds + a.warmup;
  tiny_eval(o);
  auto timed = timed_train(o, data);
  const double cpu = timed.cpu_s;
  const RunRecord run = value_or_exit(kProgram, std::move(timed.run));
  const auto& u = run.updates;
  std::size_t first = 0;
  while (first < u.size() && u[first].wall_s < a.warmup) ++first;
  if (u.size() < first + 2) {
    fail(kProgram, fmt::format("too few updates ({}) for rule {}", u.size(), rule));
  }
  double grads = 0.0;
  for (std::size_t i = first + 1; i < u.size(); ++i) grads += u[i].n_grads;
  const double span = u.back().wall_s - u[first].wall_s;
  Measure m;
  m.rate = grads / span;
  m.us_per_update = 1e6 * span / static_cast<double>(u.size() - 1 - first);
  // Whole-run CPU (setup and warm-up included, both small) per gradient applied in the run.
  m.cpu_per_grad = cpu / static_cast<double>(run.gradients.size());
  m.gradients = static_cast<double>(run.gradients.size());
  double idle = 0.0;
  for (const auto& w : run.workers) idle += w.idle_s / std::max(1e-9, w.idle_s + w.busy_s);
  m.worker_idle = idle / static_cast<double>(run.workers.size());
  return m;
}

}  // namespace

namespace kinds {
enum Kind {
  kSingle,
  kPair,
  kInlineAsync,
  kInlineSync,
  kThreadAsync,
  kThreadSync,
  kHogwild,
  kCount
};
constexpr const char* kNames[kCount] = {"single",       "pair",         "inline-async",
                                        "inline-sync",  "thread-async", "thread-sync",
                                        "hogwild-async"};
constexpr const char* kLabels[kCount] = {
    "ideal: 2 x one loop", "2 loops side by side", "inline, async", "inline, sync",
    "thread, async",       "thread, sync",         "hogwild, async"};
bool is_engine(int kind) {
  return kind >= kInlineAsync;
}
ServerPlacement placement(int kind) {
  if (kind == kThreadAsync || kind == kThreadSync) return ServerPlacement::kThread;
  if (kind == kHogwild) return ServerPlacement::kHogwild;
  return ServerPlacement::kInline;
}
const char* rule(int kind) {
  return kind == kInlineSync || kind == kThreadSync ? "sync" : "async";
}
}  // namespace kinds

// Part 2: P = 8, exp:mean=5ms, softmax: measured seconds per iteration / the theory's, per
// placement and rule (median over runs).
void delayed(const Dataset& data, const Args& args) {
  using namespace kinds;
  fmt::print("P = 8, --delay exp:mean=5ms, softmax, {} x {:.1f} s per cell: measured / theory\n",
             args.delayed_reps, args.delayed_seconds);
  fmt::print("  {:<16} {:>12} {:>12} {:>16} {:>10}\n", "", "measured s", "theory s",
             "measured/theory", "range");
  for (int kind : {kInlineAsync, kThreadAsync, kHogwild, kInlineSync, kThreadSync}) {
    ModelSpec spec;
    TrainerOptions o = run_options(data, spec, {rule(kind), 0}, 8, 32, "exp:mean=5ms");
    o.server = placement(kind);
    o.time_s = args.delayed_seconds;
    tiny_eval(o);
    const ResolvedRun resolved = value_or_exit(kProgram, ResolvedRun::resolve(o));
    const auto theory = predict_runtime(resolved);
    if (!theory) fail(kProgram, "no theory for the delayed cell");
    std::vector<double> measured, ratio;
    for (int rep = 0; rep < args.delayed_reps; ++rep) {
      o.seed = static_cast<std::uint64_t>(rep + 1);
      const ResolvedRun r = value_or_exit(kProgram, ResolvedRun::resolve(o));
      const RunRecord run = value_or_exit(kProgram, train(r, data));
      measured.push_back(seconds_per_iteration(run));
      ratio.push_back(measured.back() / theory->seconds_per_iteration);
    }
    const auto [lo, hi] = std::minmax_element(ratio.begin(), ratio.end());
    fmt::print("  {:<16} {:>12.6f} {:>12.6f} {:>16.3f} {:>10}\n", kLabels[kind], median(measured),
               theory->seconds_per_iteration, median(ratio),
               fmt::format("{:.3f}-{:.3f}", *lo, *hi));
  }
}

int main(int argc, char** argv) {
  using namespace kinds;
  const Args args = parse(argc, argv);
  const Dataset data = value_or_exit(kProgram, load_dataset("mnist", args.data_dir));
  fmt::print(
      "server_overhead: mnist, batch {}, 2 workers, --delay none, {} reps x {:.1f} s per "
      "measurement (after {:.1f} s warm-up for the engine), {} cores\n\n",
      args.batch, args.reps, args.seconds, args.warmup, std::thread::hardware_concurrency());

  for (const auto& name : args.models) {
    ModelSpec spec;
    spec.name = name;
    auto model = make_model(spec, data.train.shape, data.num_classes);
    if (!model) fail(kProgram, model.error().message);
    auto measure = [&](int kind) {
      switch (kind) {
        case kSingle:
          return worker_loop(**model, data, args.batch, args.seconds, 0, nullptr);
        case kPair:
          return worker_pair(**model, data, args.batch, args.seconds);
        default:
          return engine(data, spec, rule(kind), placement(kind), args);
      }
    };
    if (!args.only.empty()) {
      int kind = 0;
      while (kind < kCount && args.only != kNames[kind]) ++kind;
      if (kind == kCount) {
        usage(
            "--only takes single, pair, inline-async, inline-sync, thread-async, thread-sync "
            "or hogwild-async");
      }
      for (int rep = 0; rep < args.reps; ++rep) {
        const Measure m = measure(kind);
        fmt::print(
            "{} {}: {:.0f} gradients/s, {:.1f} CPU us/gradient, worker idle {:.3f}, "
            "{:.0f} gradients\n",
            name, args.only, m.rate, 1e6 * m.cpu_per_grad, m.worker_idle, m.gradients);
      }
      continue;
    }
    // Per repetition: every kind once, in an order that rotates with the repetition.
    std::vector<std::array<Measure, kCount>> reps;
    for (int rep = 0; rep < args.reps; ++rep) {
      std::array<Measure, kCount> m;
      for (int i = 0; i < kCount; ++i) {
        const int kind = (i + rep) % kCount;
        m[kind] = measure(kind);
      }
      reps.push_back(m);
      std::string line = fmt::format("  {} rep {}:", name, rep + 1);
      for (int kind = kInlineAsync; kind < kCount; ++kind) {
        line += fmt::format(" {} {:.3f}", kNames[kind], m[kind].rate / (2 * m[kSingle].rate));
      }
      fmt::print(stderr, "{} of 2 x single\n", line);
    }
    // Medians over repetitions of per-repetition figures (ratios formed within a repetition).
    auto med = [&](auto f) {
      std::vector<double> v;
      for (const auto& m : reps) v.push_back(f(m));
      return median(v);
    };
    auto range = [&](auto f) {
      std::vector<double> v;
      for (const auto& m : reps) v.push_back(f(m));
      const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
      return fmt::format("{:.2f}-{:.2f}", *lo, *hi);
    };
    const double single_rate = med([](const auto& m) { return m[kSingle].rate; });
    fmt::print(
        "{} ({} params), one worker loop: {:.0f} gradients/s, {:.1f} us/gradient (median "
        "over {} reps; range {})\n",
        (*model)->describe(), (*model)->num_params(), single_rate, 1e6 / single_rate, args.reps,
        range([](const auto& m) { return m[kSingle].rate; }));
    fmt::print("  {:<22} {:>11} {:>9} {:>11} {:>9} {:>11} {:>10} {:>9} {:>9}\n", "", "gradients/s",
               "/ ideal", "range", "/ 2 loops", "CPU us/grad", "CPU / loop", "idle/wkr",
               "us/update");
    fmt::print("  {:<22} {:>11.0f} {:>9.3f} {:>11} {:>9} {:>11.1f} {:>10.3f} {:>9} {:>9}\n",
               kLabels[kSingle], 2.0 * single_rate, 1.0, "-", "-",
               1e6 * med([](const auto& m) { return m[kSingle].cpu_per_grad; }), 1.0, "-", "-");
    for (int kind = kPair; kind < kCount; ++kind) {
      const bool eng = is_engine(kind);
      auto ratio = [&](const auto& m) { return m[kind].rate / (2.0 * m[kSingle].rate); };
      fmt::print(
          "  {:<22} {:>11.0f} {:>9.3f} {:>11} {:>9} {:>11.1f} {:>10.3f} {:>9} {:>9}\n",
          kLabels[kind], med([&](const auto& m) { return m[kind].rate; }), med(ratio), range(ratio),
          fmt::format("{:.3f}", med([&](const auto& m) { return m[kind].rate / m[kPair].rate; })),
          1e6 * med([&](const auto& m) { return m[kind].cpu_per_grad; }),
          med([&](const auto& m) { return m[kind].cpu_per_grad / m[kSingle].cpu_per_grad; }),
          eng ? fmt::format("{:.3f}", med([&](const auto& m) { return m[kind].worker_idle; }))
              : std::string("-"),
          eng ? fmt::format("{:.0f}", med([&](const auto& m) { return m[kind].us_per_update; }))
              : std::string("-"));
    }
    // With 2 whole cores and no latency, the rate could at best be 2 / (CPU per gradient):
    // the ceiling that the CPU cost alone puts on the ratio, whatever else runs on the machine.
    std::string ceilings;
    for (int kind = kInlineAsync; kind < kCount; ++kind) {
      ceilings += fmt::format(
          "{}{} {:.3f}", ceilings.empty() ? "" : ", ", kNames[kind],
          1.0 / med([&](const auto& m) { return m[kind].cpu_per_grad / m[kSingle].cpu_per_grad; }));
    }
    fmt::print("  CPU-bound ceiling on 2 idle cores (1 / CPU per loop): {}\n\n", ceilings);
  }
  if (args.only.empty() && args.delayed_reps > 0) delayed(data, args);
  return 0;
}
