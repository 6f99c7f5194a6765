// A TorchScript module trains the way PyTorch trains it (docs/models.md, "Train mode and
// buffers"): BatchNorm on each minibatch's statistics with its running statistics kept by the
// server, Dropout from the minibatch's seed; P = 1 matches PyTorch's own loop on the same
// minibatches; the trained parameters and buffers go back into PyTorch (`stalesgd export`) with
// the same test error; and a module that fails gets one line that names the failure.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "engine/mpi/mpi_test_util.hpp"
#include "output/model_file.hpp"
#include "stalesgd/data/sampler.hpp"
#include "stalesgd/util/seed.hpp"
#include "support/csv_column.hpp"
#include "support/fixtures.hpp"
#include "support/summary.hpp"
#include "support/torchscript_files.hpp"

#ifdef STALESGD_HAVE_TORCHSCRIPT

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

const std::string kModules =
    "/usr/bin/python3 " +
    (fs::path(STALESGD_SOURCE_DIR) / "tests" / "model" / "torchscript_train_modules.py").string();

// The module NAME of torchscript_train_modules.py, written once per test process.
fs::path module_file(const std::string& name) {
  const fs::path dir = fs::path(kCli).parent_path() / "test-models";
  fs::create_directories(dir);
  const fs::path out = dir / ("train-" + name + ".pt");
  if (!fs::exists(out)) {
    const auto r = run_shell(kModules + " module " + name + " --out " + out.string());
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
  }
  return out;
}

// bn-cnn's layout: its parameters, then its buffers (two BatchNorms: running mean, running
// var and num_batches_tracked each).
constexpr std::size_t kBnCnnBuffers = 8 + 8 + 1 + 16 + 16 + 1;

std::string train(const fs::path& model, const std::string& args, const fs::path& out) {
  return kTorchCli + " train --model torchscript:" + model.string() + " --no-progress " + args +
         " --out " + out.string();
}

double final_test_error(const fs::path& run) {
  return csv_column(run / "evals.csv", "test_error").back();
}

}  // namespace

TEST_CASE("torchscript train mode: P = 1 matches PyTorch's own loop on the same minibatches",
          "[model][torchscript][train-mode]") {
  // stalesgd's sequential run and PyTorch's loop, on the minibatches worker 0's sampler draws
  // (the same class, the same seed), Dropout seeded with each minibatch's seed >> 1.
  TempDir dir;
  const auto model = module_file("bn-cnn");
  constexpr int kSteps = 30, kBatch = 16;
  constexpr std::uint64_t kSeed = 7;
  const auto r = run_shell(train(model,
                                 "--sequential --batch 16 --lr 0.05 --iterations 30 --seed 7 "
                                 "--eval-every 1000s --save-model " +
                                     (dir / "stalesgd.npy").string(),
                                 dir / "run"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  {
    MinibatchSampler sampler(mnist().train, kBatch, derive_seed(kSeed, SeedStream::kSampler, 0));
    std::ofstream x(dir / "features.f32", std::ios::binary), y(dir / "labels.u8", std::ios::binary),
        s(dir / "seeds.u64", std::ios::binary);
    for (int i = 0; i < kSteps; ++i) {
      const Batch b = sampler.next();
      x.write(reinterpret_cast<const char*>(b.features),
              static_cast<std::streamsize>(sizeof(float) * 784 * kBatch));
      y.write(reinterpret_cast<const char*>(b.labels), kBatch);
      s.write(reinterpret_cast<const char*>(&b.seed), sizeof b.seed);
    }
    std::ofstream(dir / "steps.txt") << kSteps << " " << kBatch << "\n";
  }
  const auto loop =
      run_shell(kModules + " loop --module " + model.string() + " --batches " +
                dir.path().string() + " --lr 0.05 --out " + (dir / "pytorch.f32").string());
  INFO(loop.output);
  REQUIRE(loop.exit_code == 0);
  const auto ours = read_model_file(dir / "stalesgd.npy", kAnyCount);
  REQUIRE(ours);
  const auto bytes = read_bytes(dir / "pytorch.f32");
  REQUIRE(bytes.size() == ours->size() * sizeof(float));
  std::vector<float> theirs(ours->size());
  std::memcpy(theirs.data(), bytes.data(), bytes.size());
  // Float rounding differs (the server's fold b - (b - b'), LibTorch's graph optimiser): each
  // value agrees to 1e-3 of the vector's scale; another dropout mask would move the trained
  // weights by far more (checked below by a run of another seed).
  double scale = 0.0, worst = 0.0;
  for (std::size_t i = 0; i < ours->size(); ++i) {
    scale = std::max(scale, std::abs(double(theirs[i])));
    worst = std::max(worst, std::abs(double((*ours)[i]) - theirs[i]));
  }
  INFO("largest difference " << worst << " of scale " << scale);
  CHECK(worst <= 1e-3 * scale);
  // num_batches_tracked, the last buffer: one per step in both.
  CHECK(ours->back() == kSteps);
  CHECK(theirs.back() == kSteps);
  // The running means moved from their initial 0 (the first BatchNorm's 8 values).
  const std::size_t first_buffer = ours->size() - kBnCnnBuffers;
  double moved = 0.0;
  for (std::size_t i = 0; i < 8; ++i)
    moved = std::max(moved, std::abs(double((*ours)[first_buffer + i])));
  CHECK(moved > 1e-3);

  // Another seed draws other minibatches' masks: PyTorch's loop on these minibatches with
  // other seeds lands far from stalesgd's, so the agreement above is the masks'.
  {
    std::vector<std::uint64_t> seeds(kSteps);
    for (int i = 0; i < kSteps; ++i) seeds[i] = 2 * static_cast<std::uint64_t>(i) + 12345;
    std::ofstream(dir / "seeds.u64", std::ios::binary)
        .write(reinterpret_cast<const char*>(seeds.data()),
               static_cast<std::streamsize>(seeds.size() * sizeof seeds[0]));
  }
  REQUIRE(run_shell(kModules + " loop --module " + model.string() + " --batches " +
                    dir.path().string() + " --lr 0.05 --out " + (dir / "other.f32").string())
              .exit_code == 0);
  const auto other_bytes = read_bytes(dir / "other.f32");
  REQUIRE(other_bytes.size() == bytes.size());
  std::vector<float> other(ours->size());
  std::memcpy(other.data(), other_bytes.data(), other_bytes.size());
  double apart = 0.0;
  for (std::size_t i = 0; i < ours->size(); ++i) {
    apart = std::max(apart, std::abs(double((*ours)[i]) - other[i]));
  }
  CHECK(apart > 10 * worst);
}

TEST_CASE("torchscript train mode: k-async with stragglers on threads, exported back into PyTorch",
          "[model][torchscript][train-mode][export]") {
  TempDir dir;
  const auto model = module_file("bn-cnn");
  const auto r =
      run_shell(train(model,
                      "--workers 4 --rule k-async --k 2 --delay 'exp:mean=5ms;w3=exp:mean=20ms' "
                      "--batch 32 --iterations 150 --eval-every 1000s --save-model " +
                          (dir / "w.npy").string(),
                      dir / "run"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const double ours = final_test_error(dir / "run");
  CHECK(ours < 0.2);  // 150 updates of a small CNN: far below chance (0.9)
  const auto w = read_model_file(dir / "w.npy", kAnyCount);
  REQUIRE(w);
  // Every buffer of the trained model moved from the file's: BatchNorm's running statistics
  // are the server's, folded from the workers' (running var starts at 1, mean at 0).
  const std::size_t first = w->size() - kBnCnnBuffers;
  CHECK((*w)[first + 16] ==
        Approx(150).margin(0));  // the first num_batches_tracked: one per update
  int unchanged = 0;
  for (std::size_t i = 0; i < 16; ++i) unchanged += (*w)[first + i] == (i < 8 ? 0.0f : 1.0f);
  CHECK(unchanged == 0);

  const auto eval = run_shell(kTorchCli + " eval --model torchscript:" + model.string() +
                              " --dataset mnist --model-file " + (dir / "w.npy").string());
  INFO(eval.output);
  REQUIRE(eval.exit_code == 0);
  CHECK_THAT(eval.output, Contains(fmt::format("{:.4f}", ours)));

  const auto exported =
      run_shell(kTorchCli + " export --model torchscript:" + model.string() + " --model-file " +
                (dir / "w.npy").string() + " --out " + (dir / "trained.pt").string() +
                " --state-dict " + (dir / "trained.pth").string());
  INFO(exported.output);
  REQUIRE(exported.exit_code == 0);
  const std::string expected = fmt::format("test error {:.6f}", ours);
  const auto jit = run_shell(kModules + " score --data-dir " + repo_data_dir().string() +
                             " --module " + (dir / "trained.pt").string());
  INFO(jit.output);
  CHECK_THAT(jit.output, Contains(expected));
  const auto eager = run_shell(kModules + " score --data-dir " + repo_data_dir().string() +
                               " --state-dict " + (dir / "trained.pth").string());
  INFO(eager.output);
  CHECK_THAT(eager.output, Contains(expected));
}

TEST_CASE("torchscript train mode: a Dropout model's virtual-clock run is byte-identical",
          "[model][torchscript][train-mode]") {
  TempDir a, b;
  const auto model = module_file("bn-cnn");
  const std::string args =
      "--clock virtual --workers 4 --rule k-async --k 2 --delay exp:mean=5ms --batch 16 "
      "--iterations 60 --eval-every 0.05s --eval-samples 500";
  for (const auto* d : {&a, &b})
    REQUIRE(run_shell(train(model, args, d->path() / "run")).exit_code == 0);
  for (const char* f : {"updates.csv", "gradients.csv", "evals.csv"}) {
    INFO(f);
    CHECK(output_bytes(a / "run" / f) == output_bytes(b / "run" / f));
  }
  // And another seed is another run (the masks and minibatches are the seed's).
  REQUIRE(run_shell(train(model, args + " --seed 2", a.path() / "other")).exit_code == 0);
  CHECK(output_bytes(a / "run" / "updates.csv") != output_bytes(a / "other" / "updates.csv"));
}

TEST_CASE("torchscript train mode: the server thread, Hogwild! and MPI keep the buffers too",
          "[model][torchscript][train-mode][mpi]") {
  TempDir dir;
  const auto model = module_file("bn-cnn");
  for (const std::string engine :
       {"--server thread --rule k-async --k 2", "--server hogwild --rule async"}) {
    INFO(engine);
    const fs::path out = dir / (engine.find("hogwild") != std::string::npos ? "hogwild" : "thread");
    const auto r = run_shell(train(model,
                                   "--workers 3 " + engine +
                                       " --batch 16 --iterations 40 --eval-every 1000s "
                                       "--save-model " +
                                       (out.string() + ".npy"),
                                   out));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto w = read_model_file(out.string() + ".npy", kAnyCount);
    REQUIRE(w);
    CHECK((*w)[w->size() - kBnCnnBuffers + 16] >= 39.0f);  // num_batches_tracked: ~ one per update
  }
  require_mpi();
  const auto r = run_mpi_shell("timeout 120 tools/mpirun.sh -np 3 " STALESGD_CLI
                               " train --engine mpi --model torchscript:" +
                               model.string() +
                               " --rule k-async --k 1 --batch 16 --iterations 30 "
                               "--eval-every 1000s --no-progress --save-model " +
                               (dir / "mpi.npy").string() + " --out " + (dir / "mpi").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto w = read_model_file(dir / "mpi.npy", kAnyCount);
  REQUIRE(w);
  CHECK((*w)[w->size() - kBnCnnBuffers + 16] == 30.0f);
}

TEST_CASE("torchscript train mode: a module that fails is one line, exit 1, and blocks nothing",
          "[model][torchscript][train-mode][cli]") {
  TempDir dir;
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases{
      {"buffer-grows",
       {"its buffer seen changes shape in train mode, from a 1 tensor to a 2 tensor"}},
      {"train-fails",
       {"its forward fails in train mode: RuntimeError: shape '[-1, 3]' is invalid for input of "
        "size 1568",
        "h = h.view(-1, 3)"}},
      {"state-dict",
       {"holds pickled tensors (torch.save, e.g. a state_dict), not a scripted module"}},
  };
  const fs::path out = dir / "run";
  for (const auto& [name, expected] : cases) {
    INFO(name);
    const auto r = run_shell(train(module_file(name), "--iterations 5", out));
    INFO(r.output);
    CHECK(r.exit_code == 1);
    CHECK(line_count(r.output) == 1);
    for (const auto& e : expected) CHECK_THAT(r.output, Contains(e));
  }
  // The corrected command, into the same folder.
  const auto r = run_shell(train(module_file("bn-cnn"), "--iterations 5 --eval-every 1000s", out));
  INFO(r.output);
  CHECK(r.exit_code == 0);
}

TEST_CASE(
    "torchscript export: a module with other names or shapes, or another model's values, "
    "is one line, exit 1, and writes nothing",
    "[model][torchscript][export][cli]") {
  TempDir dir;
  const auto model = module_file("bn-cnn");
  REQUIRE(run_shell(train(model,
                          "--clock virtual --iterations 5 --eval-every 1000s --save-model " +
                              (dir / "w.npy").string(),
                          dir / "run"))
              .exit_code == 0);
  const std::string base = kTorchCli + " export --model torchscript:" + model.string() + " --out " +
                           (dir / "out.pt").string() + " ";
  const std::vector<std::pair<std::string, std::string>> cases{
      {"--model-file " + (dir / "w.npy").string() + " --into " +
           module_file("bn-cnn-named").string(),
       "has no parameter '0.weight', which the trained module has"},
      {"--model-file " + (dir / "w.npy").string() + " --into " +
           module_file("bn-cnn-wide").string(),
       "parameter '0.weight' is a 12 x 1 x 3 x 3 tensor there but a 8 x 1 x 3 x 3 tensor in the "
       "trained module"},
      {"--model-file " + (dir / "w.npy").string() + " --into " + module_file("state-dict").string(),
       "not a scripted module"},
      {"--model-file " + (dir / "run" / "summary.json").string(), "--model-file"},
  };
  for (const auto& [args, expected] : cases) {
    INFO(args);
    const auto r = run_shell(base + args);
    INFO(r.output);
    CHECK(r.exit_code == 1);
    CHECK(line_count(r.output) == 1);
    CHECK_THAT(r.output, Contains(expected));
    CHECK_FALSE(fs::exists(dir / "out.pt"));
  }
  // Another model's parameters: the count names both.
  REQUIRE(run_shell(kTorchCli +
                    " train --model mlp --clock virtual --iterations 2 --eval-every 1000s "
                    "--no-progress --save-model " +
                    (dir / "mlp.npy").string() + " --out " + (dir / "mlp").string())
              .exit_code == 0);
  const auto wrong = run_shell(base + "--model-file " + (dir / "mlp.npy").string());
  INFO(wrong.output);
  CHECK(wrong.exit_code == 1);
  CHECK_THAT(wrong.output, Contains("buffer values); give the file train --save-model wrote"));
  const auto r = run_shell(base + "--model-file " + (dir / "w.npy").string());
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(fs::exists(dir / "out.pt"));
}

namespace {

// The outputs of a run that a failing module ended: everything written, marked failed.
void check_failed_outputs(const fs::path& out) {
  const auto summary = read_summary(out);
  CHECK(summary["status"] == "failed");
  CHECK(summary["stop_reason"] == "failed");
  CHECK(fs::exists(out / "workers.csv"));
  CHECK(fs::exists(out / "evals.csv"));
}

}  // namespace

TEST_CASE(
    "torchscript train mode: a forward that fails mid-run names it, its traceback in run.log, "
    "and the run's outputs are written as failed on every engine",
    "[model][torchscript][train-mode][cli]") {
  // fails-later passes the probe's batch of 2 and fails on the first minibatch of 16.
  TempDir dir;
  int i = 0;
  for (const std::string engine :
       {"--workers 2 --rule async", "--workers 2 --rule async --server hogwild",
        "--clock virtual --workers 2", "--sequential"}) {
    INFO(engine);
    const fs::path out = dir / ("run" + std::to_string(i++));
    const auto r =
        run_shell(train(module_file("fails-later"), engine + " --batch 16 --iterations 5", out));
    INFO(r.output);
    CHECK(r.exit_code == 1);
    CHECK(line_count(r.output) == 1);
    CHECK_THAT(r.output,
               Contains("its forward fails in train mode: RuntimeError: shape '[-1, 3]' is "
                        "invalid for input of size 12544 (at `h = h.view(-1, 3)`"));
    CHECK_THAT(r.output, !Contains("internal error"));
    // The whole traceback, for the one who debugs the module.
    CHECK_THAT(slurp(out / "run.log"), Contains("Traceback of TorchScript"));
    check_failed_outputs(out);
  }
}

TEST_CASE(
    "torchscript train mode: a module right only for the two-sample check fails on its first "
    "real batch as one line naming the view and its shapes, exit 1, outputs written as failed",
    "[model][torchscript][train-mode][cli]") {
  // batch-of-two views its input as 2 x 784: the check's batch of 2 passes; the first real
  // batch fails, in eval mode (snapshot 0, 500 samples at a time) or in train mode (a minibatch
  // of 16), whichever comes first; on the virtual clock and in the sequential trainer snapshot 0
  // is scored before the first gradient.
  TempDir dir;
  int i = 0;
  for (const std::string engine : {"--clock virtual --workers 2", "--workers 2 --rule async",
                                   "--workers 2 --rule async --server hogwild", "--sequential"}) {
    INFO(engine);
    const fs::path out = dir / ("run" + std::to_string(i++));
    const auto r =
        run_shell(train(module_file("batch-of-two"), engine + " --batch 16 --iterations 5", out));
    INFO(r.output);
    CHECK(r.exit_code == 1);
    CHECK(line_count(r.output) == 1);
    CHECK_THAT(r.output,
               Contains("its forward fails in ") &&
                   Contains("RuntimeError: shape '[2, 784]' is invalid for input of size ") &&
                   Contains("(at `return self.fc(x.view(2, 784))`"));
    if (engine.find("virtual") != std::string::npos) {
      CHECK_THAT(r.output, Contains("evaluating a snapshot: its forward fails in eval mode: "
                                    "RuntimeError: shape '[2, 784]' is invalid for input of size "
                                    "392000"));
    }
    CHECK_THAT(r.output, !Contains("internal error"));
    CHECK_THAT(slurp(out / "run.log"), Contains("Traceback of TorchScript"));
    check_failed_outputs(out);
  }
}

#endif
