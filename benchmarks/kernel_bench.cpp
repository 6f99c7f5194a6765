// kernel_bench: the time of one SGD step (forward + backward + w -= lr * g) of one model on one
// fixed batch, single thread: real MNIST images for the 28x28 models, CIFAR-shaped random data
// for cifar-cnn (CIFAR-10 is not shipped by any registry). Many repetitions, median.
// benchmarks/kernel_bench.sh runs it interleaved with benchmarks/pytorch_kernels.py.
//
//   kernel_bench --model mlp --batch 64 [--hidden 256,128] [--reps 300] [--data-dir data]
//                [--dense-input]    (MNIST pixels +1e-3: no zeros, so no sparse first layer)
// Prints one line: `stalesgd <model> <batch> <median us/step> <flops/step>`.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <Eigen/Core>

#include "bench_common.hpp"
#include "stalesgd/data/catalog.hpp"
#include "stalesgd/model/model.hpp"

namespace {

using stalesgd::bench::parse_flags;
using stalesgd::bench::Usage;

// No -h/--help: kernel_bench never took them (--help is a flag missing its value).
constexpr Usage usage{"kernel_bench",
                      "kernel_bench --model M --batch B [--hidden H] [--reps R] [--data-dir DIR] "
                      "[--dense-input]",
                      false};

struct Args {
  std::string model = "softmax";
  std::string hidden;
  std::string data_dir = "data";
  int batch = 64;
  int reps = 300;
  bool dense_input = false;
};

Args parse(int argc, char** argv) {
  Args a;
  parse_flags(argc, argv, usage,
              {{"--dense-input", &a.dense_input},
               {"--model", &a.model},
               {"--hidden", &a.hidden},
               {"--data-dir", &a.data_dir},
               {"--batch", &a.batch},
               {"--reps", &a.reps}});
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace stalesgd;
  const Args args = parse(argc, argv);
  ModelSpec spec;
  spec.name = args.model;
  if (!args.hidden.empty()) {
    auto hidden = parse_hidden_sizes(args.hidden);
    if (!hidden) usage(hidden.error().message);
    spec.hidden = *hidden;
  }
  const ImageShape shape =
      args.model == "cifar-cnn" ? ImageShape{3, 32, 32} : ImageShape{1, 28, 28};
  auto made = make_model(spec, shape, 10);
  if (!made) usage(made.error().message);
  const Model& model = **made;

  // The fixed batch: the first B MNIST training images, or seeded uniform CIFAR-shaped data.
  std::vector<float> features(shape.dim() * args.batch);
  std::vector<std::uint8_t> labels(args.batch);
  if (shape.channels == 1) {
    auto data = load_dataset("mnist", args.data_dir);
    if (!data) usage(data.error().message);
    if (data->train.count < static_cast<std::size_t>(args.batch))
      usage("--batch larger than MNIST");
    std::copy_n(data->train.sample(0), features.size(), features.begin());
    std::copy_n(data->train.labels.begin(), args.batch, labels.begin());
    if (args.dense_input) {
      for (auto& v : features) v += 1e-3f;
    }
  } else {
    std::mt19937_64 rng(1);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    for (auto& v : features) v = u(rng);
    for (auto& l : labels) l = static_cast<std::uint8_t>(rng() % 10);
  }
  const Batch batch{features.data(), labels.data(), args.batch};

  std::vector<float> w(model.num_params()), g(model.num_params());
  model.init_params(w, 1);
  auto ws = model.make_workspace(args.batch);
  const float lr = 1e-3f;  // small: the parameters barely move, every step does the same work
  Eigen::Map<Eigen::VectorXf> wv(w.data(), static_cast<Eigen::Index>(w.size()));
  Eigen::Map<const Eigen::VectorXf> gv(g.data(), static_cast<Eigen::Index>(g.size()));
  auto step = [&] {
    model.loss_and_gradient(w, batch, g, *ws);
    wv.noalias() -= lr * gv;
  };
  for (int i = 0; i < std::max(10, args.reps / 10); ++i) step();
  std::vector<double> us(args.reps);
  for (auto& t : us) {
    const auto t0 = std::chrono::steady_clock::now();
    step();
    t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  }
  std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
  fmt::print("stalesgd {} {} {:.1f} {:.0f}\n", args.model, args.batch, us[us.size() / 2],
             model.gradient_flops(args.batch) + 2.0 * w.size());
  return 0;
}
