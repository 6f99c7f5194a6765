// bench_common: what the benchmarks share (flags, timing, run options, theory, batch means).
#include "bench_common.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <type_traits>

#include <fmt/format.h>

#include "stalesgd/data/sampler.hpp"
#include "stalesgd/theory/runtime.hpp"

namespace stalesgd::bench {

namespace {

// Student t quantile for 31 degrees of freedom: 95% intervals from 32 batch means.
constexpr double kT31 = 2.0395;

Theory theory_for(const char* program, const RuleSpec& spec, int p, const StragglerProfile& profile,
                  std::uint64_t seed, std::uint64_t mc_iterations) {
  Theory t;
  const RuleConfig rule = value_or_exit(program, resolve_rule(spec, p));
  auto pilot = value_or_exit(program, monte_carlo_runtime(rule, profile, 16000, seed + 1000));
  // The interval's half-width is t * c * mean / sqrt(n): solve for c.
  t.cv = pilot.ci95 / kT31 * std::sqrt(static_cast<double>(pilot.iterations)) / pilot.seconds;
  const Distribution* x = profile.iid();
  auto closed = x ? closed_form_runtime(rule, *x) : std::nullopt;
  if (closed && !closed->upper_bound) {
    t.seconds = closed->seconds;
    t.closed = true;
  } else {
    auto mc = monte_carlo_runtime(rule, profile, mc_iterations, seed);
    t.seconds = mc->seconds;
    t.ci95 = mc->ci95;
    if (closed) t.bound = closed->seconds;
  }
  return t;
}

}  // namespace

void Usage::operator()(const std::string& what) const {
  fmt::print(stderr, "{}: {}\nusage: {}\n", program, what, synopsis);
  std::exit(2);
}

void parse_flags(int argc, char** argv, const Usage& usage, const std::vector<Flag>& flags) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (usage.help && (flag == "-h" || flag == "--help")) usage("help");
    const auto it =
        std::find_if(flags.begin(), flags.end(), [&](const Flag& f) { return f.name == flag; });
    if (it != flags.end()) {
      if (auto* on = std::get_if<bool*>(&it->target)) {
        **on = true;
        continue;
      }
    }
    if (i + 1 >= argc) usage("missing value for " + flag);
    const std::string v = argv[++i];
    if (it == flags.end()) usage("unknown flag " + flag);
    std::visit(
        [&](auto& out) {
          using T = std::decay_t<decltype(out)>;
          if constexpr (std::is_same_v<T, bool*>) {
            // A switch never takes a value.
          } else if constexpr (std::is_same_v<T, std::string*>) {
            *out = v;
          } else if constexpr (std::is_same_v<T, int*>) {
            *out = std::stoi(v);
          } else if constexpr (std::is_same_v<T, double*>) {
            *out = std::stod(v);
          } else if constexpr (std::is_same_v<T, std::uint64_t*>) {
            *out = std::stoull(v);
          } else if constexpr (std::is_same_v<T, std::function<void(const std::string&)>>) {
            out(v);
          }
        },
        it->target);
  }
}

std::vector<std::string> split_commas(const std::string& v) {
  std::vector<std::string> parts;
  for (std::size_t s = 0, e; s <= v.size(); s = e + 1) {
    e = std::min(v.find(',', s), v.size());
    parts.push_back(v.substr(s, e - s));
  }
  return parts;
}

void fail(const char* program, const std::string& message) {
  fmt::print(stderr, "{}: {}\n", program, message);
  std::exit(1);
}

std::string load_average() {
  double l[3] = {0, 0, 0};
  if (getloadavg(l, 3) < 0) return "?";
  return fmt::format("{:.2f} {:.2f} {:.2f}", l[0], l[1], l[2]);
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

GradientTime gradient_seconds(const Model& model, const Dataset& data, int batch) {
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
    wall.push_back(seconds_since(t0) / 200);
  }
  return {median(wall), median(cpu)};
}

TrainerOptions run_options(const Dataset& data, const ModelSpec& model, const RuleSpec& rule,
                           int workers, int batch, const std::string& delay) {
  TrainerOptions o;
  o.dataset = data.name;
  o.model = model;
  o.rule = rule;
  o.workers = workers;
  o.batch = batch;
  o.lr = 0.01;
  o.delay = delay;
  o.progress = false;
  return o;
}

void tiny_eval(TrainerOptions& o) {
  o.eval_every_s = 1e6;
  o.eval_test_samples = 100;
  o.eval_train_samples = 100;
}

TimedRun timed_train(const TrainerOptions& o, const Dataset& data) {
  const double cpu0 = cpu_seconds();
  const auto t0 = Clock::now();
  auto run = train(o, data);
  const double wall = seconds_since(t0);
  return {std::move(run), wall, cpu_seconds() - cpu0};
}

int k_of(const RuleSpec& s, int p) {
  return s.name == "sync" ? p : s.name == "async" ? 1 : s.k;
}

std::vector<RuleSpec> distinct_cells(int p, const std::vector<int>& ks) {
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

std::vector<Flag> cell_flags(CellArgs& a) {
  return {{"--plan", &a.plan},
          {"--ci", &a.ci},
          {"--min-seconds", &a.min_seconds},
          {"--max-seconds", &a.max_seconds},
          {"--batch", &a.batch},
          {"--seed", &a.seed}};
}

std::vector<PlannedCell> plan_cells(const char* program, const std::string& delay, int p,
                                    const std::vector<RuleSpec>& specs, const CellArgs& a,
                                    std::uint64_t mc_iterations) {
  const auto profile = value_or_exit(program, StragglerProfile::parse(delay, p));
  const double mean_x = profile.iid() ? profile.iid()->mean() : 0.02;
  std::vector<PlannedCell> cells;
  for (const auto& spec : specs) {
    PlannedCell c{spec, theory_for(program, spec, p, profile, a.seed, mc_iterations)};
    const double e = c.theory.seconds;
    double n = std::pow(kT31 * c.theory.cv / a.ci, 2.0);
    n = std::max({n, 32.0 * 10, a.min_seconds / e});
    n = std::min(n, std::max(320.0, a.max_seconds / e));
    c.n = static_cast<std::uint64_t>(std::ceil(n));
    c.warm = static_cast<std::uint64_t>(std::ceil(5.0 * mean_x / e)) + 1;
    cells.push_back(c);
  }
  return cells;
}

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
  s.ci95 = kT31 * std::sqrt(var / kBatches);
  return s;
}

}  // namespace stalesgd::bench
