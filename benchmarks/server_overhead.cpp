// server_overhead: what the parameter server costs with no injected delay. Gradients applied
// per second by the real-thread engine (2 workers, rules async and sync) against the ideal,
// 2 x the rate of one thread running a worker's loop (MinibatchSampler::next +
// Model::loss_and_gradient + w -= lr * g) measured in the same run. Also the rate of two such
// loops running side by side without a server: what 2 threads on this machine can really do.
// And a miniature of the fix once proposed in docs/performance.md (no server thread: the
// pushing worker applies the update itself under a lock, fused into one pass; a worker waiting
// for a sync round gathers its next minibatch meanwhile), to show what the fix would gain.
// The six measurements are interleaved (rotating order) for several repetitions; the table
// shows medians of the per-repetition ratios, so a clock drift common to one repetition cancels.
//
//   server_overhead [--data-dir data] [--models softmax,mlp] [--batch 64] [--reps 7]
//                   [--seconds 1.5] [--warmup 0.2]
//                   [--only single|pair|async|sync|proto-async|proto-sync]
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
#include "stalesgd/data/catalog.hpp"
#include "stalesgd/data/sampler.hpp"
#include "stalesgd/engine/trainer.hpp"
#include "stalesgd/model/model.hpp"
#include "stalesgd/util/seed.hpp"

namespace {

using namespace stalesgd;
using namespace stalesgd::bench;

constexpr const char* kProgram = "server_overhead";
constexpr Usage usage{kProgram,
                      "server_overhead [--data-dir DIR] [--models softmax,mlp] [--batch B] "
                      "[--reps R] [--seconds S] [--warmup S] [--only KIND]"};

struct Args {
  std::string data_dir = "data";
  std::vector<std::string> models = {"softmax", "mlp"};
  int batch = 64;
  int reps = 7;
  double seconds = 1.5;  // per measurement
  double warmup = 0.2;   // seconds of each engine run left out of its rate
  std::string only;      // single | pair | async | sync: run just that, for perf/profiling
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
               const Args& a) {
  TrainerOptions o = run_options(data, model, {rule, 0}, 2, a.batch, "none");
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

// The fix once proposed in docs/performance.md, in miniature, to measure what it would gain:
// no server thread; a worker that finishes a gradient takes the server lock and applies the
// update itself, fused into one pass (out = w - (sum + lr g) / K, the sum holding the round's
// earlier gradients), into a free buffer of a small versioned pool (readers never see a
// half-written vector, as with ParameterStore), then continues on the version it just wrote
// (still in its cache). async: every gradient is an update. sync: the first of the two
// gradients of a round is summed and its worker waits; the second applies and wakes it.
//
// Thread safety: every method may be called from any worker thread; mu_ guards all state, and
// a pinned buffer is never written while pinned.
class CombiningServer {
 public:
  CombiningServer(std::span<const float> w0, int workers)
      : buffers_(static_cast<std::size_t>(workers) + 2, std::vector<float>(w0.begin(), w0.end())),
        pins_(buffers_.size(), 0),
        sum_(w0.size(), 0.0f) {}

  // Releases a worker waiting for a round that will not complete (the end of a measurement).
  void shutdown() {
    {
      std::lock_guard lock(mu_);
      shutdown_ = true;
    }
    cv_.notify_all();
  }

  // The current version, pinned until the next push of this caller.
  int pin() {
    std::lock_guard lock(mu_);
    ++pins_[static_cast<std::size_t>(current_)];
    return current_;
  }
  const std::vector<float>& params(int buffer) const {
    return buffers_[static_cast<std::size_t>(buffer)];
  }

  // Pushes a gradient computed on `pinned`; returns the buffer to compute on next (pinned). A
  // worker that has to wait for the rest of its round first runs `while_waiting` (unlocked).
  // Not inlined, so that a profile shows the update apart from the gradient.
  template <class F>
  [[gnu::noinline]] int push(int pinned, std::span<const float> g, float lr, int k,
                             F&& while_waiting) {
    std::unique_lock lock(mu_);
    --pins_[static_cast<std::size_t>(pinned)];
    const auto n = static_cast<Eigen::Index>(g.size());
    Eigen::Map<const Eigen::VectorXf> gv(g.data(), n);
    Eigen::Map<Eigen::VectorXf> sum(sum_.data(), n);
    if (++arrived_ < k) {
      if (arrived_ == 1) {
        sum.noalias() = lr * gv;
      } else {
        sum.noalias() += lr * gv;
      }
      const std::uint64_t round = round_;
      lock.unlock();
      while_waiting();
      lock.lock();
      cv_.wait(lock, [&] { return round_ != round || shutdown_; });
    } else {
      int free = 0;
      while (free == current_ || pins_[static_cast<std::size_t>(free)] > 0) ++free;
      Eigen::Map<const Eigen::VectorXf> w(buffers_[static_cast<std::size_t>(current_)].data(), n);
      Eigen::Map<Eigen::VectorXf> out(buffers_[static_cast<std::size_t>(free)].data(), n);
      if (k == 1) {
        out.noalias() = w - lr * gv;
      } else {
        out.noalias() = w - (sum + lr * gv) * (1.0f / static_cast<float>(k));
      }
      current_ = free;
      arrived_ = 0;
      ++round_;
      cv_.notify_all();
    }
    ++pins_[static_cast<std::size_t>(current_)];
    return current_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::vector<float>> buffers_;  // writes GUARDED_BY(mu_) to unpinned buffers only
  std::vector<int> pins_;                    // GUARDED_BY(mu_)
  std::vector<float> sum_;                   // GUARDED_BY(mu_)
  int current_ = 0;                          // GUARDED_BY(mu_)
  int arrived_ = 0;                          // GUARDED_BY(mu_)
  std::uint64_t round_ = 0;                  // GUARDED_BY(mu_)
  bool shutdown_ = false;                    // GUARDED_BY(mu_)
};

Measure combining(const Model& model, const Dataset& data, int batch, double seconds, int k) {
  std::vector<float> w0(model.num_params());
  model.init_params(w0, 7);
  CombiningServer server(w0, 2);
  std::atomic<bool> go{false};    // release/acquire: only lines up the starts
  std::atomic<bool> stop{false};  // relaxed: polled once per gradient; join() publishes the counts
  std::uint64_t steps[2] = {0, 0};
  double cpu[2] = {0, 0};
  auto loop = [&](int id) {
    std::vector<float> grad(model.num_params());
    auto ws = model.make_workspace(batch);
    // Two samplers, used in turn, so that the next minibatch can be gathered (it does not
    // depend on the parameters) while this worker waits for the rest of a sync round.
    MinibatchSampler samplers[2] = {
        {data.train, batch, derive_seed(1, SeedStream::kSampler, id)},
        {data.train, batch, derive_seed(1, SeedStream::kSampler, id + 2)}};
    while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
    const double c0 = thread_cpu_seconds();
    int b = server.pin();
    int s = 0;
    Batch next = samplers[s].next();
    while (!stop.load(std::memory_order_relaxed)) {
      (void)model.loss_and_gradient(server.params(b), next, grad, *ws);
      s ^= 1;
      bool gathered = false;
      b = server.push(b, grad, 0.01f, k, [&] {
        next = samplers[s].next();
        gathered = true;
      });
      if (!gathered) next = samplers[s].next();
      ++steps[id];
    }
    cpu[id] = thread_cpu_seconds() - c0;
  };
  std::thread t(loop, 1);
  const auto start = Clock::now();
  go.store(true, std::memory_order_release);
  std::thread t0(loop, 0);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop.store(true, std::memory_order_relaxed);
  server.shutdown();  // sync: the partner of a worker that stopped would wait for ever
  t.join();
  t0.join();
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  Measure m;
  m.gradients = static_cast<double>(steps[0] + steps[1]);
  m.rate = m.gradients / wall;
  m.cpu_per_grad = (cpu[0] + cpu[1]) / m.gradients;
  return m;
}

}  // namespace

int main(int argc, char** argv) {
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
    enum Kind { kSingle, kPair, kAsync, kSync, kProtoAsync, kProtoSync, kKinds };
    const char* kind_names[kKinds] = {"single", "pair",        "async",
                                      "sync",   "proto-async", "proto-sync"};
    auto measure = [&](int kind) {
      switch (kind) {
        case kSingle:
          return worker_loop(**model, data, args.batch, args.seconds, 0, nullptr);
        case kPair:
          return worker_pair(**model, data, args.batch, args.seconds);
        case kProtoAsync:
          return combining(**model, data, args.batch, args.seconds, 1);
        case kProtoSync:
          return combining(**model, data, args.batch, args.seconds, 2);
        default:
          return engine(data, spec, kind == kAsync ? "async" : "sync", args);
      }
    };
    if (!args.only.empty()) {
      int kind = 0;
      while (kind < kKinds && args.only != kind_names[kind]) ++kind;
      if (kind == kKinds)
        usage("--only takes single, pair, async, sync, proto-async or proto-sync");
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
    std::vector<std::array<Measure, kKinds>> reps;
    for (int rep = 0; rep < args.reps; ++rep) {
      std::array<Measure, kKinds> m;
      for (int i = 0; i < kKinds; ++i) {
        const int kind = (i + rep) % kKinds;
        m[kind] = measure(kind);
      }
      reps.push_back(m);
      fmt::print(
          stderr,
          "  {} rep {}: single {:.0f}/s pair {:.0f}/s async {:.0f}/s sync {:.0f}/s fix {:.0f}/s "
          "{:.0f}/s -> async {:.3f} sync {:.3f} of 2 x single\n",
          name, rep + 1, m[kSingle].rate, m[kPair].rate, m[kAsync].rate, m[kSync].rate,
          m[kProtoAsync].rate, m[kProtoSync].rate, m[kAsync].rate / (2 * m[kSingle].rate),
          m[kSync].rate / (2 * m[kSingle].rate));
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
               "ideal: 2 x one loop", 2.0 * single_rate, 1.0, "-", "-",
               1e6 * med([](const auto& m) { return m[kSingle].cpu_per_grad; }), 1.0, "-", "-");
    for (int kind : {kPair, kAsync, kSync, kProtoAsync, kProtoSync}) {
      const bool eng = kind == kAsync || kind == kSync;
      const char* label = kind == kPair         ? "2 loops side by side"
                          : kind == kAsync      ? "async, 2 workers"
                          : kind == kSync       ? "sync, 2 workers"
                          : kind == kProtoAsync ? "proposed fix: async"
                                                : "proposed fix: sync";
      auto ratio = [&](const auto& m) { return m[kind].rate / (2.0 * m[kSingle].rate); };
      fmt::print(
          "  {:<22} {:>11.0f} {:>9.3f} {:>11} {:>9} {:>11.1f} {:>10.3f} {:>9} {:>9}\n", label,
          med([&](const auto& m) { return m[kind].rate; }), med(ratio), range(ratio),
          fmt::format("{:.3f}", med([&](const auto& m) { return m[kind].rate / m[kPair].rate; })),
          1e6 * med([&](const auto& m) { return m[kind].cpu_per_grad; }),
          med([&](const auto& m) { return m[kind].cpu_per_grad / m[kSingle].cpu_per_grad; }),
          eng ? fmt::format("{:.3f}", med([&](const auto& m) { return m[kind].worker_idle; }))
              : std::string("-"),
          eng ? fmt::format("{:.0f}", med([&](const auto& m) { return m[kind].us_per_update; }))
              : std::string("-"));
    }
    const double ra = med([](const auto& m) { return m[kAsync].rate / (2.0 * m[kSingle].rate); });
    const double pa =
        med([](const auto& m) { return m[kProtoAsync].rate / (2.0 * m[kSingle].rate); });
    const double ps =
        med([](const auto& m) { return m[kProtoSync].rate / (2.0 * m[kSingle].rate); });
    const double rs = med([](const auto& m) { return m[kSync].rate / (2.0 * m[kSingle].rate); });
    fmt::print(
        "  targets (of ideal = 2 x one loop): async {:.3f} >= 0.9 {}, sync {:.3f} >= 0.8 {}\n", ra,
        ra >= 0.9 ? "met" : "MISSED", rs, rs >= 0.8 ? "met" : "MISSED");
    // With 2 whole cores and no latency, the rate could at best be 2 / (CPU per gradient):
    // the ceiling that the CPU cost alone puts on the ratio, whatever else runs on the machine.
    // The repetitions in which the machine gave this process both cores (two plain loops ran
    // at >= 0.9 of 2 x one loop): the ratios there are what an otherwise idle machine shows.
    std::vector<double> qa, qs, qpa, qps;
    for (const auto& m : reps) {
      const double ideal = 2.0 * m[kSingle].rate;
      if (m[kPair].rate < 0.9 * ideal) continue;
      qa.push_back(m[kAsync].rate / ideal);
      qs.push_back(m[kSync].rate / ideal);
      qpa.push_back(m[kProtoAsync].rate / ideal);
      qps.push_back(m[kProtoSync].rate / ideal);
    }
    if (qa.empty()) {
      fmt::print("  no repetition had both cores free (2 loops >= 0.9 of ideal)\n");
    } else {
      fmt::print(
          "  repetitions with both cores free (2 loops >= 0.9 of ideal): {} of {}; there: "
          "async {:.3f}, sync {:.3f}, proposed fix: async {:.3f}, sync {:.3f}\n",
          qa.size(), reps.size(), median(qa), median(qs), median(qpa), median(qps));
    }
    auto ceiling = [&](int kind) {
      return 1.0 /
             med([&](const auto& m) { return m[kind].cpu_per_grad / m[kSingle].cpu_per_grad; });
    };
    fmt::print(
        "  CPU-bound ceiling on 2 idle cores (1 / CPU per loop): async {:.3f}, sync {:.3f}; "
        "proposed fix: async {:.3f}, sync {:.3f} (measured {:.3f}, {:.3f})\n\n",
        ceiling(kAsync), ceiling(kSync), ceiling(kProtoAsync), ceiling(kProtoSync), pa, ps);
  }
  return 0;
}
