// accuracy_driver: sequential minibatch SGD (w -= lr * g, shuffled epochs) on a real data set,
// printing the test error as it goes. Used to find the hyper-parameters behind the accuracies in
// docs/models.md independently of the trainer; `stalesgd train --workers 1` is the real thing.
//
//   build-models/benchmarks/accuracy_driver --dataset mnist --model mlp --hidden 256,128
//       --batch 32 --lr 0.05 --iterations 20000 --seed 1 [--eval-every 2000] [--lr-decay 0.5@10000]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "stalesgd/data/catalog.hpp"
#include "stalesgd/model/model.hpp"
#include "stalesgd/util/seed.hpp"

namespace {

struct Args {
  std::string dataset = "mnist";
  std::string model = "softmax";
  std::string hidden;
  std::string data_dir = "data";
  float l2 = 0.0f;
  int batch = 32;
  float lr = 0.05f;
  long iterations = 1000;
  long eval_every = 0;
  std::uint64_t seed = 1;
  float decay = 1.0f;  // lr *= decay every decay_every iterations
  long decay_every = 0;
};

[[noreturn]] void usage(const std::string& what) {
  fmt::print(stderr,
             "accuracy_driver: {}\nusage: accuracy_driver --dataset D --model M [--hidden H] "
             "[--l2 X] --batch B --lr LR --iterations N [--seed S] [--eval-every N] "
             "[--lr-decay F@N] [--data-dir DIR]\n",
             what);
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage("missing value for " + flag);
    const std::string v = argv[++i];
    if (flag == "--dataset") a.dataset = v;
    else if (flag == "--model") a.model = v;
    else if (flag == "--hidden") a.hidden = v;
    else if (flag == "--data-dir") a.data_dir = v;
    else if (flag == "--l2") a.l2 = std::stof(v);
    else if (flag == "--batch") a.batch = std::stoi(v);
    else if (flag == "--lr") a.lr = std::stof(v);
    else if (flag == "--iterations") a.iterations = std::stol(v);
    else if (flag == "--eval-every") a.eval_every = std::stol(v);
    else if (flag == "--seed") a.seed = std::stoull(v);
    else if (flag == "--lr-decay") {
      const auto at = v.find('@');
      if (at == std::string::npos) usage("--lr-decay wants FACTOR@EVERY, e.g. 0.5@10000");
      a.decay = std::stof(v.substr(0, at));
      a.decay_every = std::stol(v.substr(at + 1));
    } else {
      usage("unknown flag " + flag);
    }
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace stalesgd;
  const Args args = parse(argc, argv);
  auto data = load_dataset(args.dataset, args.data_dir);
  if (!data) usage(data.error().message);
  ModelSpec spec;
  spec.name = args.model;
  spec.l2 = args.l2;
  if (!args.hidden.empty()) {
    auto hidden = parse_hidden_sizes(args.hidden);
    if (!hidden) usage(hidden.error().message);
    spec.hidden = *hidden;
  }
  auto made = make_model(spec, data->train.shape, data->num_classes);
  if (!made) usage(made.error().message);
  const Model& model = **made;

  std::vector<float> w(model.num_params()), g(model.num_params());
  model.init_params(w, derive_seed(args.seed, SeedStream::kModelInit));
  auto ws = model.make_workspace(args.batch);
  auto eval_ws = model.make_workspace(1000);
  const Split& train = data->train;
  const std::size_t dim = train.dim();
  std::vector<float> features(static_cast<std::size_t>(args.batch) * dim);
  std::vector<std::uint8_t> labels(args.batch);
  std::vector<std::uint32_t> order(train.count);
  std::iota(order.begin(), order.end(), 0u);
  Rng rng(derive_seed(args.seed, SeedStream::kSampler));
  std::size_t next = train.count;  // reshuffle at the start
  float lr = args.lr;
  fmt::print("{} on {}: {} parameters, batch {}, lr {}, {} iterations, seed {}\n", model.describe(),
             args.dataset, model.num_params(), args.batch, args.lr, args.iterations, args.seed);
  double step_seconds = 0.0;
  for (long it = 1; it <= args.iterations; ++it) {
    for (int j = 0; j < args.batch; ++j) {
      if (next == train.count) {
        std::shuffle(order.begin(), order.end(), rng);
        next = 0;
      }
      const std::uint32_t s = order[next++];
      std::copy_n(train.sample(s), dim, features.data() + j * dim);
      labels[j] = train.labels[s];
    }
    const auto t0 = std::chrono::steady_clock::now();
    const auto loss = model.loss_and_gradient(w, Batch{features.data(), labels.data(), args.batch}, g, *ws);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] -= lr * g[i];
    step_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!loss || !std::isfinite(*loss)) {
      fmt::print(stderr, "accuracy_driver: loss is not finite at iteration {}; lower --lr\n", it);
      return 1;
    }
    if (args.decay_every > 0 && it % args.decay_every == 0) lr *= args.decay;
    if ((args.eval_every > 0 && it % args.eval_every == 0) || it == args.iterations) {
      const EvalResult r = model.evaluate(w, data->test, *eval_ws);
      fmt::print("iteration {:>7}  epoch {:6.2f}  test loss {:.4f}  test accuracy {:6.2f}%  ({:.0f} us/step)\n",
                 it, static_cast<double>(it) * args.batch / train.count, r.loss,
                 100.0 * (1.0 - r.error), 1e6 * step_seconds / it);
      std::fflush(stdout);
    }
  }
  return 0;
}
