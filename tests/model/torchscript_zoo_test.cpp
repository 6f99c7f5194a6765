// The zoo of tools/export_model.py (torchvision's resnet, bn-cnn, layernorm, and layernorm
// traced) trained through the binary under k-async with stragglers, on threads and on the
// virtual clock, on a slice of real MNIST (docs/models.md, "A zoo"). The cases tagged
// [train-mode] need the plugin to train in train mode: BatchNorm's running statistics kept
// with the model and Dropout drawn from the run's seeded streams.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "support/csv_column.hpp"
#include "support/fixtures.hpp"
#include "support/kept_up.hpp"
#include "support/npz_files.hpp"
#include "support/sanitized.hpp"
#include "support/summary.hpp"
#include "support/torchscript_files.hpp"

#ifdef STALESGD_HAVE_TORCHSCRIPT

using namespace stalesgd;
using namespace stalesgd::test;
namespace fs = std::filesystem;

namespace {

constexpr int kWorkers = 4;
constexpr int kK = 2;
// Chance is 0.9 on MNIST's ten classes; layernorm measured 0.28-0.41 at the budget below.
constexpr double kBelowChance = 0.75;

// The first `train` and `test` images of MNIST as an npz data set. Every snapshot scores the
// whole training split (up to 10,000 samples), which for these models costs more than the
// training itself: a slice keeps the file's runs short.
fs::path mnist_slice(const TempDir& dir, std::size_t train, std::size_t test) {
  const auto as_npz = [](const Split& s, std::size_t n, const std::string& name,
                         std::vector<ZipMember>& out) {
    std::vector<std::uint8_t> x(n * s.dim());
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = static_cast<std::uint8_t>(std::lround(s.features[i] * 255.0f));
    }
    const std::vector<std::uint8_t> y(s.labels.begin(), s.labels.begin() + n);
    out.push_back({"x_" + name + ".npy", npy("|u1", {n, 28, 28}, x)});
    out.push_back({"y_" + name + ".npy", npy("|u1", {n}, y)});
  };
  std::vector<ZipMember> members;
  as_npz(mnist().train, train, "train", members);
  as_npz(mnist().test, test, "test", members);
  const fs::path path = dir / "mnist-slice.npz";
  write_npz(path, members);
  return path;
}

struct Zoo {
  fs::path file;  // the TorchScript file
  fs::path data;  // an npz data set
  int iterations = 0;
  int batch = 32;
  double lr = 0.05;
};

// `stalesgd train` of k-async with K = 2 of 4 workers and exponential straggler delays,
// evaluated at the start and the end only.
CliResult train(const Zoo& z, const std::string& clock, const fs::path& out) {
  return run_shell(kTorchCli + " train --model torchscript:" + z.file.string() +
                   " --dataset npz:" + z.data.string() + " --workers " + std::to_string(kWorkers) +
                   " --rule k-async --k " + std::to_string(kK) +
                   " --delay exp:mean=2ms --iterations " + std::to_string(z.iterations) +
                   " --batch " + std::to_string(z.batch) + " --lr " + std::to_string(z.lr) +
                   " --clock " + clock + " --eval-every 1000s --no-progress --out " + out.string());
}

// A finished run of `iterations` updates: its summary, finite losses, every applied gradient
// in gradients.csv with its staleness, and lower test loss at the end than at the start.
// Returns the final test error.
double check_run(const fs::path& out, int iterations) {
  const auto s = read_summary(out);
  CHECK(s["status"] == "complete");
  CHECK(s["stop_reason"] == "iterations");
  CHECK(s["iterations"] == iterations);

  const auto it = csv_column(out / "updates.csv", "iteration");
  const auto n_grads = csv_column(out / "updates.csv", "n_grads");
  const auto mean_st = csv_column(out / "updates.csv", "mean_staleness");
  const auto max_st = csv_column(out / "updates.csv", "max_staleness");
  const auto loss = csv_column(out / "updates.csv", "minibatch_loss");
  REQUIRE(it.size() == static_cast<std::size_t>(iterations));
  for (std::size_t i = 0; i < it.size(); ++i) {
    INFO("update " << i + 1);
    CHECK(it[i] == static_cast<double>(i + 1));
    CHECK(n_grads[i] == kK);
    CHECK(std::isfinite(loss[i]));
  }

  // Every applied gradient is a row of gradients.csv, filed under its update, with
  // staleness = (iteration - 1) - computed_on_version.
  const auto g_it = csv_column(out / "gradients.csv", "iteration");
  const auto g_worker = csv_column(out / "gradients.csv", "worker");
  const auto g_version = csv_column(out / "gradients.csv", "computed_on_version");
  const auto g_st = csv_column(out / "gradients.csv", "staleness");
  const auto applied = s["gradients"]["applied"].get<double>();
  CHECK(g_it.size() == std::accumulate(n_grads.begin(), n_grads.end(), 0.0));
  CHECK(static_cast<double>(g_it.size()) == applied);
  const auto per_worker = csv_column(out / "workers.csv", "applied");
  CHECK(std::accumulate(per_worker.begin(), per_worker.end(), 0.0) == applied);
  std::map<long, std::vector<double>> by_update;
  for (std::size_t r = 0; r < g_it.size(); ++r) {
    INFO("gradients.csv row " << r + 1);
    CHECK(g_worker[r] >= 0);
    CHECK(g_worker[r] < kWorkers);
    CHECK(g_st[r] >= 0);
    CHECK(g_st[r] == g_it[r] - 1 - g_version[r]);
    by_update[std::lround(g_it[r])].push_back(g_st[r]);
  }
  REQUIRE(by_update.size() == it.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < it.size(); ++i) {
    const auto& st = by_update[static_cast<long>(i + 1)];
    INFO("update " << i + 1);
    REQUIRE(st.size() == static_cast<std::size_t>(kK));
    CHECK(*std::max_element(st.begin(), st.end()) == max_st[i]);
    CHECK(std::accumulate(st.begin(), st.end(), 0.0) / kK == Approx(mean_st[i]).margin(1e-4));
    worst = std::max(worst, max_st[i]);
  }
  CHECK(s["staleness"]["max"].get<double>() == worst);

  const auto e_it = csv_column(out / "evals.csv", "iteration");
  const auto test_loss = csv_column(out / "evals.csv", "test_loss");
  const auto train_loss = csv_column(out / "evals.csv", "train_loss");
  const auto test_error = csv_column(out / "evals.csv", "test_error");
  REQUIRE(e_it.size() >= 2);
  CHECK(e_it.front() == 0);
  CHECK(e_it.back() == iterations);
  for (std::size_t i = 0; i < e_it.size(); ++i) {
    CHECK(std::isfinite(test_loss[i]));
    CHECK(std::isfinite(train_loss[i]));
  }
  CHECK(test_loss.back() < test_loss.front());
  CHECK(s["final_test_error"].get<double>() == Approx(test_error.back()).margin(1e-6));
  return test_error.back();
}

// Trains `z` on threads and twice on the virtual clock with the same seed; each run must pass
// check_run (and, for `cheap` models, end below chance), and the two virtual runs must write
// the same bytes unless `same_bytes` is false (a model with Dropout: see the [train-mode] case).
void train_on_both_clocks(const Zoo& z, bool cheap, bool same_bytes = true) {
  TempDir dir;
  for (const std::string clock : {"real", "virtual"}) {
    INFO("clock " << clock);
    const auto r = train(z, clock, dir / clock);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const double error = check_run(dir / clock, z.iterations);
    if (cheap) CHECK(error < kBelowChance);
  }
  if (!same_bytes) return;
  const auto again = train(z, "virtual", dir / "virtual-again");
  INFO(again.output);
  REQUIRE(again.exit_code == 0);
  for (const char* f : {"updates.csv", "gradients.csv", "evals.csv"}) {
    INFO(f);
    CHECK(output_bytes(dir / "virtual" / f) == output_bytes(dir / "virtual-again" / f));
  }
}

}  // namespace

TEST_CASE("torchscript zoo: torchvision's resnet trains under k-async with stragglers",
          "[model][torchscript][zoo]") {
  // 4.9 million parameters and about 30 ms a gradient of 16 on one core: a short run on a
  // small slice, checked for a falling test loss only. 30 updates, since in train mode the
  // evaluation's BatchNorm statistics need about as many to forget their start.
  TempDir data;
  const Zoo z{exported_model("zoo-resnet", "resnet"), mnist_slice(data, 512, 256), 30, 16, 0.05};
  train_on_both_clocks(z, /*cheap=*/false);
}

TEST_CASE("torchscript zoo: a Conv-BatchNorm-Dropout nn.Sequential trains under k-async",
          "[model][torchscript][zoo]") {
  // Below chance only in train mode (the [train-mode] case): in eval mode its BatchNorms are
  // fixed affine maps and the plain CNN left learns slowly. Its two virtual-clock runs are
  // compared there too, since in train mode they draw Dropout masks.
  TempDir data;
  const Zoo z{exported_model("zoo-bn-cnn", "bn-cnn"), mnist_slice(data, 512, 256), 30, 16, 0.05};
  train_on_both_clocks(z, /*cheap=*/false, /*same_bytes=*/false);
}

TEST_CASE("torchscript zoo: busy LibTorch workers hold --time and a row is scored as they train",
          "[model][torchscript][zoo][keep-up]") {
  // Four workers computing in LibTorch on two cores once starved the idle-priority evaluator
  // until training ended: --time 8s took 211 s and no row was scored during the run. On the
  // whole of MNIST (the final row scores all 10,000 test images), k-async with stragglers:
  // bn-cnn, and under the sanitizers the lighter LayerNorm mixer, whose evaluation costs there
  // about what bn-cnn's does in a release build (bn-cnn's whole test split took 18 s there).
  TempDir dir;
  const fs::path model = kSanitized ? exported_model("zoo-layernorm", "layernorm")
                                    : exported_model("zoo-bn-cnn", "bn-cnn");
  const auto r = run_shell(kTorchCli + " train --model torchscript:" + model.string() +
                           " --dataset mnist --workers 4 --rule k-async --k 2"
                           " --delay exp:mean=10ms --time 8s --no-progress --out " +
                           dir.path().string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  check_kept_up(dir.path(), 8.0, r.output);
}

TEST_CASE("torchscript zoo: a LayerNorm mixer module trains under k-async",
          "[model][torchscript][zoo]") {
  TempDir data;
  const Zoo z{exported_model("zoo-layernorm", "layernorm"), mnist_slice(data, 1000, 500), 100, 32,
              0.1};
  train_on_both_clocks(z, /*cheap=*/true);
}

TEST_CASE("torchscript zoo: a traced module (torch.jit.trace) trains under k-async",
          "[model][torchscript][zoo]") {
  // Traced on a batch of 4; the plugin calls it on batches of 2, 32 and the evaluation's.
  TempDir data;
  const Zoo z{exported_model("zoo-layernorm-traced", "layernorm", "--trace"),
              mnist_slice(data, 1000, 500), 100, 32, 0.1};
  train_on_both_clocks(z, /*cheap=*/true);
}

TEST_CASE(
    "torchscript zoo: in train mode bn-cnn's BatchNorm statistics move and its Dropout "
    "masks come from the seed",
    "[model][torchscript][zoo][train-mode]") {
  // bn-cnn with running means of 5 and variances of 1e-4: in eval mode every BatchNorm output
  // is then far below zero and every ReLU after it off, so the file starts at chance and, with
  // those statistics fixed, no gradient reaches the convolutions. Trained in train mode (batch
  // statistics, running averages with momentum 0.1), the statistics forget the start within
  // the run and the final evaluation, in eval mode, is far below chance. Dropout draws a mask
  // per gradient: from the run's seeded streams, two runs with the same seed draw the same.
  TempDir dir;
  const fs::path file = dir / "bn-cnn-off.pt";
  write_text(dir / "poison.py",
             "import sys, torch\n"
             "m = torch.jit.load(sys.argv[1])\n"
             "with torch.no_grad():\n"
             "    for name, b in m.named_buffers():\n"
             "        if name.endswith('running_mean'): b.fill_(5.0)\n"
             "        if name.endswith('running_var'): b.fill_(1e-4)\n"
             "m.save(sys.argv[2])\n");
  const auto py = run_shell("/usr/bin/python3 " + (dir / "poison.py").string() + " " +
                            exported_model("zoo-bn-cnn", "bn-cnn").string() + " " + file.string());
  INFO(py.output);
  REQUIRE(py.exit_code == 0);
  const Zoo z{file, mnist_slice(dir, 1000, 500), 60, 16, 0.05};
  for (const char* out : {"a", "b"}) {
    const auto r = train(z, "virtual", dir / out);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
  }
  const auto test_error = csv_column(dir / "a" / "evals.csv", "test_error");
  REQUIRE(test_error.size() >= 2);
  CHECK(test_error.front() > 0.8);  // the file's statistics, in eval mode
  CHECK(check_run(dir / "a", z.iterations) < kBelowChance);
  for (const char* f : {"updates.csv", "gradients.csv", "evals.csv"}) {
    INFO(f);
    CHECK(output_bytes(dir / "a" / f) == output_bytes(dir / "b" / f));
  }
}

#endif
