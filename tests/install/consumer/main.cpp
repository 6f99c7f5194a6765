// A program that uses stalesgd as an installed library (tests/install/consumer/CMakeLists.txt):
// it includes only <stalesgd/...>, trains sync and async SGD on a synthetic data set on the
// virtual clock, and checks each run's test error and seconds per iteration, the latter against
// the runtime theory. docs/install.md quotes it; tests/install/install_test.sh builds and runs it.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>

#include <stalesgd/config/resolved_run.hpp>
#include <stalesgd/engine/trainer.hpp>
#include <stalesgd/metrics/records.hpp>
#include <stalesgd/theory/runtime.hpp>
#include <stalesgd/version.hpp>

namespace {

// 10 classes of 8x8 images: class c lights up pixels 6c..6c+5 above uniform noise.
stalesgd::Split make_split(std::size_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> noise(0.0f, 0.3f);
  stalesgd::Split s;
  s.shape = {1, 8, 8};
  s.count = count;
  for (std::size_t i = 0; i < count; ++i) {
    const int label = static_cast<int>(i % 10);
    for (int p = 0; p < 64; ++p) s.features.push_back(p / 6 == label ? 1.0f : noise(rng));
    s.labels.push_back(static_cast<std::uint8_t>(label));
  }
  return s;
}

int fail(const std::string& message) {
  std::fprintf(stderr, "consumer: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main() {
  std::printf("stalesgd %s (commit %s)\n", std::string(stalesgd::version()).c_str(),
              std::string(stalesgd::git_commit()).c_str());

  std::mt19937 rng(7);
  stalesgd::Dataset data;
  data.name = "synthetic";
  data.train = make_split(2000, rng);
  data.test = make_split(500, rng);

  for (const std::string rule : {"sync", "async"}) {
    stalesgd::TrainerOptions o;
    o.model.name = "softmax";
    o.rule = {rule, 0};  // K = 0: the rule's own (P for sync, 1 for async)
    o.workers = 4;
    o.delay = "exp:mean=10ms";
    o.clock = stalesgd::ClockKind::kVirtual;  // simulated time: no sleeping, one result per seed
    o.iterations = 400;
    o.eval_every_s = 1000.0;  // evaluate at the start and at the end only
    o.progress = false;

    const auto run = stalesgd::ResolvedRun::resolve(o);
    if (!run) return fail(run.error().message);
    const auto record = stalesgd::train(*run, data);
    if (!record) return fail(record.error().message);
    const auto theory = stalesgd::predict_runtime(*run);
    if (!theory) return fail("no runtime prediction for " + rule);

    const double error_before = record->evals.front().test_error;
    const double error = record->evals.back().test_error;
    const double measured = stalesgd::seconds_per_iteration(*record);
    std::printf("%-5s P = 4: %zu updates, test error %.3f -> %.3f, s/iter %.5f (theory %.5f, %s)\n",
                rule.c_str(), record->updates.size(), error_before, error, measured,
                theory->seconds_per_iteration, stalesgd::to_string(theory->method));
    // The classes are separable, and 400 updates sample the mean time per update within 15%.
    if (record->updates.size() != 400 || error_before < 0.5 || error > 0.05 ||
        std::abs(measured / theory->seconds_per_iteration - 1.0) > 0.15) {
      return fail(rule + " did not train as expected");
    }
  }
  return 0;
}
