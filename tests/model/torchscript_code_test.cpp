// A TorchScript file is code (docs/models.md, "A module is code"): one that reads or writes
// files, whether in its forward or in the __setstate__ that loading runs, is refused in one
// line before it runs; and a path that is not a regular file is refused before LibTorch opens
// it. Modules from tests/model/torchscript_code_modules.py.
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include <fstream>

#include "output/model_file.hpp"
#include "support/fixtures.hpp"
#include "support/torchscript_files.hpp"

#ifdef STALESGD_HAVE_TORCHSCRIPT

using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

const std::string kModules =
    "/usr/bin/python3 " +
    (fs::path(STALESGD_SOURCE_DIR) / "tests" / "model" / "torchscript_code_modules.py").string();

fs::path make(const TempDir& dir, const std::string& name, const fs::path& target) {
  const fs::path out = dir / (name + ".pt");
  const auto r =
      run_shell(kModules + " " + name + " --target " + target.string() + " --out " + out.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return out;
}

CliResult train(const fs::path& module, const fs::path& out) {
  return run_shell(kTorchCli + " train --model torchscript:" + module.string() +
                   " --iterations 3 --no-progress --out " + out.string());
}

}  // namespace

TEST_CASE("torchscript code: a module whose loading writes a file is refused before it loads",
          "[model][torchscript]") {
  TempDir dir;
  const std::vector<float> weights(10 * 784 + 10, 0.0f);
  REQUIRE(stalesgd::write_model_file(dir / "weights.npy", weights));
  for (const std::string name : {"writes-on-load", "spaced"}) {
    INFO(name);
    const fs::path target = dir / (name + "-written.pt");
    const fs::path module = make(dir, name, target);
    // PyTorch's own torch.jit.load runs its __setstate__, which writes the file: the module is
    // as dangerous as the test says.
    REQUIRE(run_shell(kModules + " load " + module.string()).exit_code == 0);
    REQUIRE(fs::exists(target));
    fs::remove(target);
    for (const auto& command :
         {train(module, dir / (name + "-run")),
          run_shell(kTorchCli + " export --model torchscript:" + module.string() +
                    " --model-file " + (dir / "weights.npy").string() + " --out " +
                    (dir / "x.pt").string())}) {
      INFO(command.output);
      CHECK(command.exit_code == 1);
      CHECK(line_count(command.output) == 1);
      CHECK_THAT(command.output, Contains("calls aten::save, which reads or writes files") &&
                                     Contains("A module is code"));
      CHECK_FALSE(fs::exists(target));
    }
  }
}

TEST_CASE("torchscript code: a forward that reads a file with torch.from_file is refused",
          "[model][torchscript]") {
  TempDir dir;
  std::ofstream(dir / "secret") << "1234";
  const fs::path module = make(dir, "reads-file", dir / "secret");
  const auto r = train(module, dir / "run");
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(line_count(r.output) == 1);
  CHECK_THAT(r.output, Contains("calls aten::from_file, which reads or writes files"));
}

TEST_CASE("torchscript code: a FIFO or a device as the module is refused before it is opened",
          "[model][torchscript]") {
  TempDir dir;
  REQUIRE(::mkfifo((dir / "fifo.pt").c_str(), 0644) == 0);
  for (const auto& [path, kind] : {std::pair{(dir / "fifo.pt").string(), "a FIFO"},
                                   {std::string("/dev/zero"), "a character device"}}) {
    const auto r = train(path, dir / "run");
    INFO(r.output);
    CHECK(r.exit_code == 1);
    CHECK(line_count(r.output) == 1);
    CHECK_THAT(r.output, Contains(std::string("not a regular file (") + kind));
  }
}

#endif
