// bench_common: what the benchmarks share (flags, timing, run options, theory, batch means).
//
// Thread safety: nothing here keeps state, so any thread may call it; the helpers that exit
// (Usage, fail, value_or_exit) are meant for the main thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "stalesgd/data/dataset.hpp"
#include "stalesgd/engine/trainer.hpp"
#include "stalesgd/model/model.hpp"
#include "stalesgd/rules/rule.hpp"
#include "stalesgd/straggler/profile.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd::bench {

using Clock = std::chrono::steady_clock;

// ---- Command line.

// A bad command line: "<program>: <what>", the usage line, exit status 2.
struct Usage {
  const char* program;
  const char* synopsis;  // printed after "usage: "
  bool help = true;      // -h and --help print it ("help"); kernel_bench never took them
  [[noreturn]] void operator()(const std::string& what) const;
};

// One flag and where it goes. A switch (bool*) stands alone and sets it; every other flag
// takes the next argument, converted with std::stoi / stod / stoull, or handed to a function.
struct Flag {
  std::string_view name;
  std::variant<bool*, std::string*, int*, double*, std::uint64_t*,
               std::function<void(const std::string&)>>
      target;
};

// Walks argv[1..] in order. A flag that is not a switch and ends the line is "missing value
// for"; an unknown one is reported after its value is taken, as the benchmarks always did.
void parse_flags(int argc, char** argv, const Usage& usage, const std::vector<Flag>& flags);

// "a,b,c" -> {"a", "b", "c"}; an empty piece stays (and fails whatever converts it).
std::vector<std::string> split_commas(const std::string& v);

// ---- Errors: expected failures end a benchmark with "<program>: <message>" and status 1.

[[noreturn]] void fail(const char* program, const std::string& message);

template <class T>
T value_or_exit(const char* program, Result<T> r) {
  if (!r) fail(program, r.error().message);
  return std::move(r).value();
}

// ---- Clocks and small statistics.

// The 1-minute, 5-minute and 15-minute load averages: how much of the cores a run really had.
std::string load_average();

double cpu_seconds();         // this process, all threads (getrusage)
double thread_cpu_seconds();  // the calling thread

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v);

// One softmax gradient with its minibatch gather, single thread: medians of 7 x 200.
struct GradientTime {
  double wall_s = 0.0;
  double cpu_s = 0.0;
};
GradientTime gradient_seconds(const Model& model, const Dataset& data, int batch);

// ---- Runs.

// What every benchmark run shares: lr 0.01 and no progress line; the caller sets the rest.
TrainerOptions run_options(const Dataset& data, const ModelSpec& model, const RuleSpec& rule,
                           int workers, int batch, const std::string& delay);

// One tiny snapshot at t = 0 (100 samples each): evaluation is not what is measured.
void tiny_eval(TrainerOptions& o);

// train() with the wall and process CPU seconds it took.
struct TimedRun {
  Result<RunRecord> run;
  double wall_s = 0.0;
  double cpu_s = 0.0;
};
TimedRun timed_train(const TrainerOptions& o, const Dataset& data);

// ---- The runtime theory (docs/theory.md) and the iterations a cell needs.

// K as the rule sees it: sync waits for all P, async for one.
int k_of(const RuleSpec& s, int p);

// sync, async, then k-sync, k-batch-sync, k-async, k-batch-async at each of `ks`, minus those
// that schedule exactly like another: k-sync K=P and k-async K=P are sync; k-async K=1 and
// k-batch-async K=1 are async; k-batch-sync K=1 is k-sync K=1 (the first gradient ends the
// round and cancels the rest).
std::vector<RuleSpec> distinct_cells(int p, const std::vector<int>& ks);

struct Theory {
  double seconds = 0.0;
  bool closed = false;          // closed form, else Monte Carlo
  double ci95 = 0.0;            // Monte Carlo only
  std::optional<double> bound;  // the closed form where it is only an upper bound (k-async)
  double cv = 0.0;              // pilot: effective per-iteration coefficient of variation
};

// The flags of the benchmarks that run theory-vs-measurement cells (fidelity, scale); the
// sizing defaults are each benchmark's own.
struct CellArgs {
  double ci = 0.02;  // --ci: the 95% half-width to aim for, relative to the mean
  double min_seconds = 2.0;
  double max_seconds = 150.0;
  int batch = 32;
  std::uint64_t seed = 1;
  bool plan = false;  // --plan: print the cells and their planned time, run nothing
};

// --ci, --min-seconds, --max-seconds, --batch, --seed and --plan, writing to `a`.
std::vector<Flag> cell_flags(CellArgs& a);

// One theory-vs-measurement cell, planned: its theory and how many updates it runs.
struct PlannedCell {
  RuleSpec spec;
  Theory theory;
  std::uint64_t n = 0;     // steady-state iterations: (2.04 c / h)^2 for a 95% half-width h
  std::uint64_t warm = 0;  // updates dropped as warm-up: those of the first 5 E[X]
  double planned_seconds() const { return static_cast<double>(n + warm) * theory.seconds; }
};

// Plans each of `specs` at P workers under `delay`. The theory: the closed form where there is
// one (and exact), else Monte Carlo over `mc_iterations`; a 16000-update Monte-Carlo pilot
// gives c from its batch-means interval, so the correlation between iterations of the async
// rules is included. n: at least --min-seconds of expected time and 320 updates (10 per batch
// mean), at most --max-seconds. Exits on a bad delay spec.
std::vector<PlannedCell> plan_cells(const char* program, const std::string& delay, int p,
                                    const std::vector<RuleSpec>& specs, const CellArgs& a,
                                    std::uint64_t mc_iterations);

struct Steady {
  double mean = 0.0;  // seconds per iteration after the warm-up
  double ci95 = 0.0;  // half-width, 32 batch means
  std::size_t iterations = 0;
};

// Seconds per iteration from update `warm` on, with a 32-batch-means interval (the estimator
// of monte_carlo_runtime applied to measured update times). Index-based, so a real and a
// virtual run of the same cell average over the same iterations.
Steady steady_state(const std::vector<UpdateRecord>& u, std::size_t warm);

}  // namespace stalesgd::bench
