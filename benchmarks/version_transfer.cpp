// version_transfer: what one server update costs depending on where the parameter versions
// live, on 2 threads pinned to 2 CPUs. The one-thread loop of server_overhead updates w in
// place in its own cache; the engine keeps consistent snapshots, so every update writes a new
// version from the current one, which (with 2 workers) the other core has just written. The
// difference per update, set against one gradient of the same model, is CPU the engine spends
// and the loop does not, whatever the server's scheduling:
//   ceiling of (engine rate / 2 x loop rate) <= t_loop / (t_loop + extra),
// t_loop = gradient with its gather + in-place update. docs/performance.md quotes it.
//
//   version_transfer [--data-dir data] [--models softmax,mlp] [--batch 64] [--updates 2000]
//                    [--reps 5]
// Each placement runs `updates` updates per repetition, and each repetition also times the
// model's gradient (bench_common's gradient_seconds), all in rotating order; the table shows
// medians over repetitions. Hand-offs between the threads block (atomic wait), and
// only the update itself is timed, from the end of each measurement's first tenth.
#include <pthread.h>
#include <sched.h>

#include <array>
#include <atomic>
#include <functional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bench_common.hpp"
#include "engine/update_accumulator.hpp"
#include "stalesgd/data/catalog.hpp"
#include "stalesgd/model/model.hpp"

namespace {

using namespace stalesgd;
using namespace stalesgd::bench;

constexpr const char* kProgram = "version_transfer";
constexpr Usage usage{kProgram,
                      "version_transfer [--data-dir DIR] [--models softmax,mlp] [--batch B] "
                      "[--updates N] [--reps R]"};
constexpr float kLr = 0.01f;

struct Args {
  std::string data_dir = "data";
  std::vector<std::string> models = {"softmax", "mlp"};
  int batch = 64;
  int updates = 2000;  // per placement and repetition
  int reps = 5;
};

Args parse(int argc, char** argv) {
  Args a;
  parse_flags(argc, argv, usage,
              {{"--data-dir", &a.data_dir},
               {"--models", [&](const std::string& v) { a.models = split_commas(v); }},
               {"--batch", &a.batch},
               {"--updates", &a.updates},
               {"--reps", &a.reps}});
  if (a.batch < 1 || a.updates < 1 || a.reps < 1)
    usage("--batch, --updates and --reps take positive integers");
  return a;
}

// The first two CPUs this process may run on; the placements need two distinct ones.
std::array<int, 2> two_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) fail(kProgram, "sched_getaffinity failed");
  std::array<int, 2> cpus{-1, -1};
  int found = 0;
  for (int c = 0; c < CPU_SETSIZE && found < 2; ++c) {
    if (CPU_ISSET(c, &set)) cpus[static_cast<std::size_t>(found++)] = c;
  }
  if (found < 2) fail(kProgram, "needs 2 CPUs to place the threads on; this process has 1");
  return cpus;
}

void pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

using Buffer = std::vector<float>;

void update(const Buffer& w, const Buffer& g, Buffer& out) {
  UpdateAccumulator::apply_single(w, g, kLr, out);
}

// What a gradient does with the version it starts from: read all of it (outside the timing).
float read_all(const Buffer& w) {
  float s = 0.0f;
  for (float v : w) s += v;
  return s;
}

// The first tenth of each measurement is not timed: a core that was idle starts slow.
int warm_up(int updates) {
  return updates / 10;
}

// One thread, alone: `updates` times `step(i)`. Returns mean seconds per timed update.
double one_core(int cpu, int updates, const std::function<void(int)>& step) {
  double total = 0.0;
  std::thread t([&] {
    pin_to(cpu);
    for (int i = 0; i < updates; ++i) {
      const auto t0 = Clock::now();
      step(i);
      if (i >= warm_up(updates)) total += seconds_since(t0);
    }
  });
  t.join();
  return total / (updates - warm_up(updates));
}

// Two threads on two CPUs taking turns: turn i belongs to thread i % 2, which runs `step(i)`
// (timed), then `after(i)` (not timed), and hands over. Returns mean seconds per update.
double two_cores(const std::array<int, 2>& cpus, int updates, const std::function<void(int)>& step,
                 const std::function<void(int)>& after) {
  // The turn counter publishes the buffers written in one turn to the next: release on the
  // store, acquire on the load, so the other thread sees the whole update.
  std::atomic<int> turn{0};
  std::array<double, 2> total{0.0, 0.0};
  auto player = [&](int me) {
    pin_to(cpus[static_cast<std::size_t>(me)]);
    for (int i = me; i < updates; i += 2) {
      for (int t = turn.load(std::memory_order_acquire); t != i;
           t = turn.load(std::memory_order_acquire)) {
        turn.wait(t, std::memory_order_acquire);
      }
      const auto t0 = Clock::now();
      step(i);
      if (i >= warm_up(updates)) total[static_cast<std::size_t>(me)] += seconds_since(t0);
      after(i);
      turn.store(i + 1, std::memory_order_release);
      turn.notify_one();
    }
  };
  std::thread first(player, 0);  // both on their own threads: main keeps its affinity
  std::thread second(player, 1);
  first.join();
  second.join();
  return (total[0] + total[1]) / (updates - warm_up(updates));
}

enum Placement {
  kInPlace,
  kNewLocal,
  kNewFromOther,
  kNewFromOtherIntoOwn,
  kInPlaceOther,
  kPlacements
};
constexpr std::array<const char*, kPlacements> kNames = {
    "in place, one core (the one-thread loop)",
    "new version, one core",
    "new version from the other core's (the engine)",
    "  the same into a buffer this core wrote last",
    "in place on the other core's version (no snapshots)",
};

// Two threads alternating, each writing version i + 1 from version i into a ring of `ring`
// buffers, then reading all of it as its next gradient would.
double alternating(const std::array<int, 2>& cpus, int updates, std::vector<Buffer>& versions,
                   std::size_t ring, const std::array<Buffer, 2>& grads) {
  volatile float sink = 0.0f;
  return two_cores(
      cpus, updates,
      [&](int i) {
        const auto j = static_cast<std::size_t>(i);
        update(versions[j % ring], grads[j % 2], versions[(j + 1) % ring]);
      },
      [&](int i) { sink = sink + read_all(versions[(static_cast<std::size_t>(i) + 1) % ring]); });
}

double measure(int placement, std::size_t n, const std::array<int, 2>& cpus, int updates) {
  std::vector<Buffer> versions(4, Buffer(n, 1.0f));
  std::array<Buffer, 2> grads{Buffer(n, 0.5f), Buffer(n, 0.25f)};
  volatile float sink = 0.0f;
  switch (placement) {
    case kInPlace:
      return one_core(cpus[0], updates, [&](int) { update(versions[0], grads[0], versions[0]); });
    case kNewLocal:
      return one_core(cpus[0], updates, [&](int i) {
        update(versions[static_cast<std::size_t>(i % 4)], grads[0],
               versions[static_cast<std::size_t>((i + 1) % 4)]);
      });
    case kNewFromOther:
      // With 2 workers the store cycles through 3 buffers: the next version goes into the one
      // the other core wrote and this core last read as an update's source (97% of the mlp
      // async updates in server_overhead), so its lines are already here.
      return alternating(cpus, updates, versions, 3, grads);
    case kNewFromOtherIntoOwn:
      // A ring of 4: the buffer this core wrote 4 updates ago, read by the other core since,
      // whose copies every write must first invalidate.
      return alternating(cpus, updates, versions, 4, grads);
    default:
      return two_cores(
          cpus, updates,
          [&](int i) { update(versions[0], grads[static_cast<std::size_t>(i % 2)], versions[0]); },
          [&](int) { sink = sink + read_all(versions[0]); });
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  const auto cpus = two_cpus();
  const Dataset data = value_or_exit(kProgram, load_dataset("mnist", args.data_dir));
  fmt::print(
      "version_transfer: mnist, batch {}, threads pinned to CPUs {} and {}, {} updates x {} reps "
      "per placement (medians); load average {}\n",
      args.batch, cpus[0], cpus[1], args.updates, args.reps, load_average());
  for (const auto& name : args.models) {
    ModelSpec spec;
    spec.name = name;
    auto model = make_model(spec, data.train.shape, data.num_classes);
    if (!model) fail(kProgram, model.error().message);
    const std::size_t n = (*model)->num_params();
    // The placements and one gradient (the loop's other part), in rotating order: a clock
    // drift during the run hits all of them alike.
    constexpr int kGradient = kPlacements;
    std::array<std::vector<double>, kPlacements + 1> seconds;
    for (int rep = 0; rep < args.reps; ++rep) {
      for (int k = 0; k <= kPlacements; ++k) {
        const int what = (k + rep) % (kPlacements + 1);
        seconds[static_cast<std::size_t>(what)].push_back(
            what == kGradient ? gradient_seconds(**model, data, args.batch).wall_s
                              : measure(what, n, cpus, args.updates));
      }
    }
    std::array<double, kPlacements + 1> med{};
    for (std::size_t p = 0; p < med.size(); ++p) med[p] = median(seconds[p]);
    const double grad_s = med[kGradient];
    fmt::print(
        "\n{} ({} params, {:.0f} KiB per version); one gradient with its gather: {:.1f} us\n",
        (*model)->describe(), n, n * sizeof(float) / 1024.0, 1e6 * grad_s);
    fmt::print("  {:<53}{:>10}{:>12}\n", "placement", "us/update", "x in place");
    for (std::size_t p = 0; p < kNames.size(); ++p) {
      fmt::print("  {:<53}{:>10.1f}{:>12.2f}\n", kNames[p], 1e6 * med[p], med[p] / med[kInPlace]);
    }
    const double loop = grad_s + med[kInPlace];
    const double extra = med[kNewFromOther] - med[kInPlace];
    fmt::print(
        "  engine's extra CPU per update {:.1f} us = {:.1f}% of the loop's {:.1f} us per gradient: "
        "the update alone caps async (one update per gradient) at {:.3f} of 2 x the loop\n",
        1e6 * extra, 100 * extra / loop, 1e6 * loop, loop / (loop + extra));
  }
  return 0;
}
