// tbb_bench: the two places stalesgd uses oneTBB's parallel_for, each against the code it
// replaced, in the same process, repetitions interleaved (the order rotates), at most 2 threads:
//
//   eval    the Evaluator (src/engine/evaluator.cpp) on MNIST, mlp and lenet: one snapshot
//           evaluated inline (the virtual clock) serially vs in TBB blocks; the snapshots left
//           at the end of a run (1 and 8) on plain threads, a snapshot each (the old code), vs
//           TBB tasks; and a whole virtual-clock run with the default evaluation (softmax, P =
//           8, exp:mean=50ms, a snapshot every 0.5 virtual s) with TBB held to 1 thread vs 2.
//   theory  monte_carlo_runtime (src/theory/monte_carlo.cpp): one simulation on one thread (the
//           old code, 1 chunk) vs the chunked estimate on 2 threads, and the chunks on 1 thread
//           (what the extra warm-ups cost).
//
// Each line: the median time of each variant and the median over repetitions of the ratio
// old / TBB (above 1: TBB is faster). Clock speed drifts on a shared machine; read the ratios.
//
//   tbb_bench [--data-dir data] [--reps 9] [--only eval|theory]
#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <tbb/global_control.h>

#include "bench_common.hpp"
#include "engine/evaluator.hpp"
#include "stalesgd/data/catalog.hpp"
#include "stalesgd/engine/trainer.hpp"
#include "stalesgd/model/model.hpp"
#include "stalesgd/theory/runtime.hpp"
#include "theory/monte_carlo.hpp"

namespace {

using namespace stalesgd;
using namespace stalesgd::bench;

constexpr const char* kProgram = "tbb_bench";
constexpr Usage usage{kProgram, "tbb_bench [--data-dir DIR] [--reps R] [--only eval|theory]"};

struct Args {
  std::string data_dir = "data";
  int reps = 9;
  std::string only;
};

// Runs every variant once per repetition, in an order that rotates, and prints one line:
// median seconds of each and the median of the per-repetition ratios variant[0] / variant[i].
void compare(const std::string& label, int reps,
             const std::vector<std::pair<std::string, std::function<void()>>>& variants) {
  std::vector<std::vector<double>> times(variants.size());
  for (auto& v : variants) v.second();  // warm-up: workspaces, TBB's threads, caches
  for (int r = 0; r < reps; ++r) {
    for (std::size_t j = 0; j < variants.size(); ++j) {
      const std::size_t i = (j + static_cast<std::size_t>(r)) % variants.size();
      const auto t0 = Clock::now();
      variants[i].second();
      times[i].push_back(seconds_since(t0));
    }
  }
  std::string line = fmt::format("{:<44}", label);
  for (std::size_t i = 0; i < variants.size(); ++i) {
    line += fmt::format(" {:>9.2f} ms {:<10}", 1e3 * median(times[i]), variants[i].first);
  }
  for (std::size_t i = 1; i < variants.size(); ++i) {
    std::vector<double> ratio;
    for (int r = 0; r < reps; ++r) ratio.push_back(times[0][r] / times[i][r]);
    line += fmt::format("  {}/{} {:.2f}", variants[0].first, variants[i].first, median(ratio));
  }
  std::puts(line.c_str());
  std::fflush(stdout);
}

// Evaluates `n` snapshots: inline, or queued for a background evaluator and left to finish().
void evaluate(const Model& m, const Dataset& d, const std::vector<float>& w, bool parallel,
              bool background, int n) {
  EvaluatorOptions o;
  o.background = background;
  o.parallel = parallel;
  o.catch_up = false;  // the backlog is left to finish(), which is what this measures
  Evaluator e(m, d, o);
  for (int i = 0; i < n; ++i) e.submit(i, static_cast<std::uint64_t>(i), w, i + 1 == n);
  if (e.finish().size() != static_cast<std::size_t>(n)) fail(kProgram, "an evaluation failed");
}

void bench_eval(const Args& a, const Dataset& d) {
  std::printf("eval: MNIST, test split 10000 + train 10000 samples per snapshot, batch 500\n");
  const tbb::global_control two(tbb::global_control::max_allowed_parallelism, 2);
  for (const char* name : {"mlp", "lenet"}) {
    ModelSpec spec;
    spec.name = name;
    const auto m = value_or_exit(kProgram, make_model(spec, d.test.shape, d.num_classes));
    std::vector<float> w(m->num_params());
    m->init_params(w, 1);
    compare(fmt::format("{}: 1 snapshot inline", name), a.reps,
            {{"serial", [&] { evaluate(*m, d, w, false, false, 1); }},
             {"tbb", [&] { evaluate(*m, d, w, true, false, 1); }}});
    for (int n : {1, 8}) {
      compare(fmt::format("{}: {} left at the end", name, n), a.reps,
              {{"threads", [&] { evaluate(*m, d, w, false, true, n); }},
               {"tbb", [&] { evaluate(*m, d, w, true, true, n); }}});
    }
  }
  auto o = run_options(d, {"softmax", {}, 0.0f}, {"async", 0}, 8, 32, "exp:mean=50ms");
  o.clock = ClockKind::kVirtual;
  o.time_s = 30.0;
  const auto run = [&](int threads) {
    const tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    value_or_exit(kProgram, train(o, d));
  };
  compare("softmax virtual run, 30 s, 61 snapshots", a.reps,
          {{"1-thread", [&] { run(1); }}, {"2-thread", [&] { run(2); }}});
}

void bench_theory(const Args& a) {
  std::printf("theory: P = 8, exp:mean=20ms; 1 chunk = one simulation on one thread\n");
  const auto profile = value_or_exit(kProgram, StragglerProfile::parse("exp:mean=20ms", 8));
  for (const RuleConfig& rule :
       {RuleConfig{"async", 8, 1}, RuleConfig{"k-sync", 8, 4}, RuleConfig{"k-batch-async", 8, 4}}) {
    for (std::uint64_t n : {20000ull, 400000ull}) {
      const int chunks = monte_carlo_chunks(8, n);
      const auto mc = [&](int threads, int c) {
        const tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
        value_or_exit(kProgram,
                      monte_carlo_runtime_in_chunks(rule, profile, n, 1, DelayMode::kPad, 0.0, c));
      };
      compare(fmt::format("{} K={}, N = {}, {} chunks", rule.rule, rule.k, n, chunks), a.reps,
              {{"1-chunk", [&] { mc(1, 1); }}, {"tbb-2", [&] { mc(2, chunks); }}, {"tbb-1", [&] {
                                                                                     mc(1, chunks);
                                                                                   }}});
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  parse_flags(argc, argv, usage,
              {{"--data-dir", &a.data_dir}, {"--reps", &a.reps}, {"--only", &a.only}});
  if (!a.only.empty() && a.only != "eval" && a.only != "theory") usage("--only: eval or theory");
  std::printf("# %s, 2 threads at most, load average %s\n", kProgram, load_average().c_str());
  const auto t0 = Clock::now();
  if (a.only != "theory") {
    const auto d = value_or_exit(kProgram, load_dataset("mnist", a.data_dir));
    bench_eval(a, d);
  }
  if (a.only != "eval") bench_theory(a);
  std::printf("# finished in %.0f s, load average %s\n", seconds_since(t0), load_average().c_str());
}
