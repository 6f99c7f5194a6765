// A model as a plug-in (stalesgd/plugin.hpp): examples/custom_model's hand-written softmax,
// loaded by the CLI with --plugin, trains under `train --model hand-softmax` as the built-in
// softmax does (the same model: the same error), on the virtual clock and on MPI ranks, each of
// which loads the plug-in.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "engine/mpi/mpi_test_util.hpp"
#include "support/fixtures.hpp"
#include "support/summary.hpp"

using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

const std::string kPlugin = (fs::path(STALESGD_TEST_PLUGIN_DIR) / "libhand_softmax.so").string();

double final_error(const fs::path& dir) {
  return read_summary(dir)["final_test_error"].get<double>();
}

}  // namespace

TEST_CASE("model plug-in: train --model hand-softmax trains as the built-in softmax",
          "[model][plugin][cli]") {
  TempDir dir;
  const std::string run =
      " train --rule k-async --k 2 --workers 4 --delay exp:mean=10ms --clock virtual "
      "--iterations 300 --lr 0.1 --eval-every 1000s --eval-samples 2000 --no-progress ";
  auto r = run_shell(kCli + run + "--plugin " + kPlugin + " --model hand-softmax --out " +
                     (dir / "hand").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("hand-softmax on mnist"));
  r = run_shell(kCli + run + "--model softmax --out " + (dir / "built-in").string());
  REQUIRE(r.exit_code == 0);
  // The same model, minibatches and delays: the same error up to float rounding.
  CHECK(final_error(dir / "hand") < 0.2);
  CHECK(std::abs(final_error(dir / "hand") - final_error(dir / "built-in")) < 0.02);
  // Without the plug-in the name is unknown: one line, exit 2.
  r = run_shell(kCli + run + "--model hand-softmax");
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.output) == 1);
  CHECK_THAT(r.output, Contains("unknown model 'hand-softmax'"));
}

TEST_CASE("model plug-in: every MPI rank loads it", "[model][plugin][mpi]") {
  require_mpi();
  TempDir dir;
  const auto r = run_mpi_shell(
      "timeout 60 tools/mpirun.sh -np 3 " STALESGD_CLI " train --engine mpi --plugin " + kPlugin +
      " --model hand-softmax --rule async --workers 2 --delay exp:mean=5ms --iterations 100 "
      "--eval-every 1000s --no-progress --out " +
      (dir / "mpi").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(read_summary(dir / "mpi")["model"] == "hand-softmax");
  CHECK(final_error(dir / "mpi") < 0.5);
}
