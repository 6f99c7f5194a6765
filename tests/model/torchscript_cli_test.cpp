// `stalesgd train --model torchscript:PATH` through the binary: bad files get one line and a
// non-zero exit and leave nothing that blocks the corrected command; the MPI engine trains a
// scripted model; a run cut by kill -9 and resumed writes the uninterrupted run's bytes.
#include <catch2/catch.hpp>

#include "engine/mpi/mpi_test_util.hpp"
#include "support/fixtures.hpp"
#include "support/summary.hpp"
#include "support/torchscript_files.hpp"

#ifdef STALESGD_HAVE_TORCHSCRIPT

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

TEST_CASE("torchscript CLI: a bad TorchScript file is one line, exit 1, and blocks nothing",
          "[model][torchscript][cli]") {
  TempDir dir;
  write_bytes(dir / "text.pt", {'n', 'o', 't', ' ', 'a', ' ', 'm', 'o', 'd', 'e', 'l'});
  const auto wide = exported_model("mlp-1x32x32", "mlp", "--input 1x32x32");
  const auto five = exported_model("mlp-5-classes", "mlp", "--classes 5");
  const std::vector<float> nan(101770, std::nanf(""));
  export_with_weights(dir / "nan.pt", "mlp", nan);
  const std::vector<std::pair<std::string, std::string>> cases{
      {(dir / "missing.pt").string(), "no such file"},
      {(dir / "text.pt").string(), "is not a TorchScript file"},
      {wide.string(), "its forward fails on a 2x1x28x28 batch"},
      {five.string(), "to 2x5, not 2x10"},
      {(dir / "nan.pt").string(), "non-finite logits"},
  };
  const fs::path out = dir / "run";
  for (const auto& [file, expected] : cases) {
    INFO(file);
    const auto r = run_shell(kTorchCli + " train --model torchscript:" + file +
                             " --iterations 5 --no-progress --out " + out.string());
    INFO(r.output);
    CHECK(r.exit_code == 1);
    CHECK(line_count(r.output) == 1);
    CHECK_THAT(r.output, Contains("stalesgd: error: --model torchscript:") && Contains(expected));
  }
  const auto good = exported_model("mlp-mnist", "mlp");
  const auto r = run_shell(kTorchCli + " train --model torchscript:" + good.string() +
                           " --iterations 5 --no-progress --out " + out.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto summary = read_summary(out);
  CHECK(summary["iterations"] == 5);
  // The LibTorch the plugin was built against, in the provenance (Debian 12's: 1.13).
  CHECK(
      summary["provenance"]["build"]["libraries"]["LibTorch"].get<std::string>().starts_with("1."));
  CHECK_THAT(slurp(out / "run.log"), Contains("LibTorch 1."));
}

TEST_CASE("torchscript CLI: the MPI engine's ranks train a scripted model",
          "[model][torchscript][mpi]") {
  require_mpi();
  TempDir dir;
  const auto file = exported_model("mlp-mnist", "mlp");
  const auto r = run_mpi_shell("timeout 120 tools/mpirun.sh -np 3 " STALESGD_CLI
                               " train --engine mpi --model torchscript:" +
                               file.string() +
                               " --rule k-async --k 1 --batch 16 --iterations 40 "
                               "--eval-every 1000s --no-progress --out " +
                               dir.path().string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto run = read_run(dir.path());
  REQUIRE(run.updates.size() == 40);
  for (std::size_t i = 0; i < run.updates.size(); ++i) {
    CHECK(num(run.updates[i], "iteration") == static_cast<long>(i + 1));
  }
  const auto s = read_summary(dir.path());
  CHECK(s["config"]["model"] == "torchscript:" + file.string());
}

TEST_CASE("torchscript CLI: a virtual-clock run killed with kill -9 and resumed is the same run",
          "[model][torchscript][resume]") {
  TempDir a, b;
  const auto file = exported_model("mlp-mnist", "mlp");
  const std::string run = kTorchCli + " train --model torchscript:" + file.string() +
                          " --clock virtual --time 4s --rule k-async --k 2 --workers 4 "
                          "--delay exp:mean=10ms --eval-every 1s --checkpoint-every 0.5s "
                          "--no-progress --out ";
  REQUIRE(run_shell(run + a.path().string()).exit_code == 0);
  const auto cut = run_shell(run + b.path().string() +
                             " >/dev/null 2>&1 & pid=$!; for i in $(seq 1500); do [ -e " +
                             (b / "checkpoint.bin").string() +
                             " ] && break; sleep 0.02; done; sleep 0.2; kill -0 $pid 2>/dev/null "
                             "|| echo finished; kill -KILL $pid; wait $pid");
  INFO(cut.output);
  REQUIRE(cut.output.find("finished") == std::string::npos);
  REQUIRE(summary_status(b.path()) == "running");  // written at the start, never ended
  const auto resumed = run_shell(kTorchCli + " train --no-progress --resume " + b.path().string());
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  for (const char* f : {"updates.csv", "gradients.csv", "evals.csv", "workers.csv"}) {
    INFO(f);
    CHECK(output_bytes(a / f) == output_bytes(b / f));
  }
}

#endif
