// --save-model and `stalesgd eval`: the final parameters as .npy, read back by NumPy and scored
// to the run's own final test error; bad files and paths are one line.
#include <sys/stat.h>

#include <fstream>

#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/fixtures.hpp"

using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

TEST_CASE("a saved model's eval error is the run's final test error", "[output][cli]") {
  TempDir dir;
  const auto model = dir / "mlp.npy";
  auto r = run_cli({"train",
                    "--model",
                    "mlp",
                    "--hidden",
                    "32",
                    "--rule",
                    "k-async",
                    "--k",
                    "2",
                    "--workers",
                    "4",
                    "--delay",
                    "exp:mean=10ms",
                    "--clock",
                    "virtual",
                    "--time",
                    "1s",
                    "--no-progress",
                    "--out",
                    (dir / "run").string(),
                    "--save-model",
                    model.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  std::ifstream in(dir / "run" / "summary.json");
  const auto summary = nlohmann::json::parse(in);
  const auto e =
      run_cli({"eval", "--model", "mlp", "--hidden", "32", "--model-file", model.string()});
  INFO(e.output);
  REQUIRE(e.exit_code == 0);
  // The whole test split, as the run's evaluations: the same error to the last sample.
  CHECK_THAT(e.output, Contains(fmt::format("test error        {:.4f}",
                                            summary["final_test_error"].get<double>())));
  // NumPy reads it: float32, one dimension, the model's parameter count.
  const auto np = run_shell("/usr/bin/python3 -c \"import numpy as np; a = np.load('" +
                            model.string() + "'); print(a.dtype, a.shape)\"");
  INFO(np.output);
  CHECK(np.output == "float32 (" + std::to_string(summary["num_params"].get<long>()) + ",)\n");
}

TEST_CASE("save-model into folders that do not exist yet makes them, as --out does",
          "[output][cli]") {
  TempDir dir;
  const auto model = dir / "new" / "deeper" / "m.npy";
  const auto r = run_cli({"train", "--clock", "virtual", "--iterations", "3", "--no-progress",
                          "--save-model", model.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(fs::file_size(model) > 128);  // the .npy header and the parameters
  // A path through a file is still refused, and nothing is made.
  std::ofstream(dir / "file") << "x";
  const auto bad = run_cli({"train", "--iterations", "1", "--no-progress", "--save-model",
                            (dir / "file" / "sub" / "m.npy").string()});
  CHECK(bad.exit_code == 1);
  CHECK(line_count(bad.output) == 1);
  CHECK_THAT(bad.output, Contains("cannot create"));
}

TEST_CASE("save-model and eval: a bad path or file is one line", "[output][cli]") {
  TempDir dir;
  std::ofstream(dir / "file") << "x";
  std::ofstream(dir / "not.npy") << "not numpy";
  REQUIRE(::mkfifo((dir / "fifo.npy").c_str(), 0644) == 0);
  std::ofstream(dir / "huge.npy").close();
  fs::resize_file(dir / "huge.npy", std::uint64_t{1} << 32);  // sparse: no disk used
  auto r = run_cli({"train", "--iterations", "1", "--no-progress", "--save-model",
                    (dir / "file" / "m.npy").string()});
  CHECK(r.exit_code == 1);
  CHECK(line_count(r.output) == 1);
  CHECK_THAT(r.output, Contains("is not a folder this user can write in"));
  // A softmax file given to an mlp: another parameter count.
  REQUIRE(run_cli({"train", "--iterations", "2", "--no-progress", "--save-model",
                   (dir / "softmax.npy").string()})
              .exit_code == 0);
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--model-file", (dir / "missing.npy").string()}, "missing.npy: file not found"},
      // A device or a FIFO is refused before a byte is read: /dev/zero once read until the
      // memory ran out, and a FIFO with no writer hung the command.
      {{"--model-file", "/dev/zero"}, "/dev/zero: not a regular file (a character device)"},
      {{"--model-file", (dir / "fifo.npy").string()}, "fifo.npy: not a regular file (a FIFO)"},
      // Larger than any file of the model's parameter count: refused before it is read.
      {{"--model", "mlp", "--model-file", (dir / "huge.npy").string()},
       "huge.npy: 4294967296 bytes, more than the"},
      {{"--model-file", (dir / "not.npy").string()}, "not.npy: "},
      {{"--model", "mlp", "--model-file", (dir / "softmax.npy").string()},
       "holds 7850 parameters, the model"},
  };
  for (const auto& [flags, expected] : cases) {
    std::vector<std::string> args{"eval"};
    args.insert(args.end(), flags.begin(), flags.end());
    const auto e = run_cli(args);
    INFO(e.output);
    CHECK(e.exit_code == 1);
    CHECK(line_count(e.output) == 1);
    CHECK_THAT(e.output, Contains(expected));
  }
  CHECK(run_cli({"eval"}).exit_code == 2);  // --model-file is required
}
