// A model of one's own through stalesgd's public API: multinomial logistic regression written
// by hand against stalesgd::Model (hand_softmax.hpp), registered by name, and trained with
// k-async and straggler delays on the virtual clock by the same train() the CLI uses, next to
// the built-in softmax (the same model), whose test error it must match.
// usage: custom_model [DATA_DIR]
#include <cmath>
#include <cstdio>
#include <string>

#include <stalesgd/config/resolved_run.hpp>
#include <stalesgd/data/catalog.hpp>
#include <stalesgd/engine/trainer.hpp>

#include "hand_softmax.hpp"

namespace {

int fail(const std::string& message) {
  std::fprintf(stderr, "custom_model: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const auto registered = register_hand_softmax();
  if (!registered) return fail(registered.error().message);

  const auto data = stalesgd::load_dataset("mnist", argc > 1 ? argv[1] : "data");
  if (!data) return fail(data.error().message);

  double errors[2] = {0.0, 0.0};
  int i = 0;
  for (const std::string model : {"hand-softmax", "softmax"}) {
    stalesgd::TrainerOptions o;
    o.model.name = model;
    o.rule = {"k-async", 2};
    o.workers = 4;
    o.delay = "exp:mean=10ms";
    o.clock = stalesgd::ClockKind::kVirtual;
    o.iterations = 300;
    o.lr = 0.1;
    o.eval_every_s = 1000.0;
    o.eval_test_samples = 2000;
    o.progress = false;
    const auto record = stalesgd::train(o, *data);
    if (!record) return fail(record.error().message);
    errors[i++] = record->evals.back().test_error;
    std::printf("%-12s k-async P = 4, K = 2: %zu updates, test error %.4f\n", model.c_str(),
                record->updates.size(), record->evals.back().test_error);
  }
  // The same model, the same minibatches and delays (the seed): the same error up to rounding.
  if (errors[0] > 0.2 || std::abs(errors[0] - errors[1]) > 0.02) {
    return fail("the hand-written softmax did not train like the built-in one");
  }
  return 0;
}
