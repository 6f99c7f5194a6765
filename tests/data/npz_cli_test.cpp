// --dataset npz:PATH through the stalesgd binary: data info, data fetch (refused), a training
// run that learns the file's classes, a race from a TOML file, and a bad file's one line that
// leaves nothing in --out that blocks the corrected command.
#include <catch2/catch.hpp>

#include <fstream>

#include "support/fixtures.hpp"
#include "support/npz_files.hpp"
#include "support/summary.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

// Two classes a linear model separates: sample i of class i % 2 has its 4 features near -1 or
// +1 (a deterministic jitter of up to 0.4), as float32 (N, 4).
std::vector<ZipMember> separable(std::size_t train, std::size_t test) {
  const auto split = [](std::size_t n, std::size_t offset) {
    std::vector<float> x(n * 4);
    std::vector<std::int64_t> y(n);
    for (std::size_t i = 0; i < n; ++i) {
      y[i] = static_cast<std::int64_t>(i % 2);
      for (std::size_t f = 0; f < 4; ++f) {
        const float jitter = 0.1f * static_cast<float>((i * 7 + f * 3 + offset) % 9) - 0.4f;
        x[i * 4 + f] = (y[i] == 0 ? -1.0f : 1.0f) + jitter;
      }
    }
    return std::pair{npy("<f4", {n, 4}, x), npy("<i8", {n}, y)};
  };
  auto [x_train, y_train] = split(train, 0);
  auto [x_test, y_test] = split(test, 5);
  return {{"x_train.npy", x_train},
          {"y_train.npy", y_train},
          {"x_test.npy", x_test},
          {"y_test.npy", y_test}};
}

const std::string kTrain =
    " train --model softmax --rule async --workers 2 --delay exp:mean=1ms "
    "--clock virtual --iterations 300 --lr 0.1 --no-progress";

}  // namespace

TEST_CASE("npz CLI: data info prints the file's counts, shape and classes", "[data][npz][cli]") {
  TempDir dir;
  const fs::path file = dir / "small.npz";
  write_npz(file, small_npz_members(), {.deflate = true});
  const auto r = run_cli({"data", "info", "--dataset", "npz:" + file.string()});
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("data set    npz:" + file.string()) && Contains("train       6") &&
                           Contains("test        3") && Contains("image       1x2x3") &&
                           Contains("train class counts  2 2 2") &&
                           Contains("test  class counts  1 1 1"));
  // What the reader decided: layout, scale, and where the classes came from.
  CHECK_THAT(r.output, Contains("\nlayout      x (N, 2, 3): images of one channel\n"
                                "features    uint8 scaled by 1/255\n"
                                "classes     3 (the largest label + 1; labels 0 .. 2)\n"));

  const auto missing = run_cli({"data", "info", "--dataset", "npz:" + (dir / "no.npz").string()});
  CHECK(missing.exit_code == 1);
  CHECK(line_count(missing.output) == 1);
  CHECK_THAT(missing.output, Contains("no.npz: file not found"));
}

TEST_CASE("npz CLI: data fetch says an npz file is local, exit 2", "[data][npz][cli]") {
  const auto r = run_cli({"data", "fetch", "npz:mine.npz"});
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.output) == 1);
  CHECK_THAT(r.output, Contains("stalesgd: error: npz:mine.npz is a local .npz file, which "
                                "`stalesgd data fetch` does not fetch"));
  const auto empty = run_cli({"train", "--dataset", "npz:", "--iterations", "1"});
  CHECK(empty.exit_code == 2);
  CHECK_THAT(empty.output, Contains("npz: needs the path of an .npz file"));
}

TEST_CASE("npz CLI: train learns the file's classes", "[data][npz][cli]") {
  TempDir dir;
  const fs::path file = dir / "sep.npz";
  write_npz(file, separable(200, 60));
  const fs::path out = dir / "run";
  const auto r =
      run_shell(kCli + kTrain + " --dataset npz:" + file.string() + " --out " + out.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("softmax(4-2) on npz:" + file.string()));
  const auto summary = read_summary(out);
  CHECK(summary["config"]["dataset"] == "npz:" + file.string());
  CHECK(summary["final_test_error"].get<double>() < 0.05);
}

TEST_CASE("npz CLI: a bad file fails in one line and blocks nothing in --out", "[data][npz][cli]") {
  TempDir dir;
  const fs::path file = dir / "d.npz";
  auto members = separable(100, 20);
  members.erase(members.begin() + 1);  // y_train
  write_npz(file, members);
  const fs::path out = dir / "run";
  const std::string command =
      kCli + kTrain + " --dataset npz:" + file.string() + " --out " + out.string();
  auto r = run_shell(command);
  CHECK(r.exit_code == 1);
  CHECK(line_count(r.output) == 1);
  CHECK_THAT(r.output, Contains("stalesgd: error: " + file.string() + ": no array 'y_train'"));
  CHECK_FALSE(fs::exists(out / "summary.json"));
  write_npz(file, separable(100, 20));
  r = run_shell(command);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(read_summary(out)["config"]["dataset"] == "npz:" + file.string());
}

TEST_CASE("npz CLI: a race's runs take dataset = \"npz:PATH\"", "[data][npz][cli]") {
  TempDir dir;
  const fs::path file = dir / "sep.npz";
  write_npz(file, separable(200, 60), {.deflate = true});
  const fs::path config = dir / "race.toml";
  std::ofstream(config) << "dataset = \"npz:" << file.string()
                        << "\"\nmodel = \"mlp\"\nclock = \"virtual\"\niterations = 100\n"
                           "workers = 2\ndelay = \"exp:mean=1ms\"\n"
                           "[[run]]\nlabel = \"async\"\nrule = \"async\"\n"
                           "[[run]]\nlabel = \"sync\"\nrule = \"sync\"\n";
  const auto r = run_cli(
      {"race", "--config", config.string(), "--no-progress", "--out", (dir / "race").string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(read_summary(dir / "race" / "sync")["config"]["dataset"] == "npz:" + file.string());
  CHECK(read_summary(dir / "race" / "async")["config"]["model"] == "mlp");

  // A model that does not fit the file's samples is refused before any run.
  std::ofstream(config, std::ios::app) << "[[run]]\nlabel = \"cnn\"\nmodel = \"lenet\"\n";
  const auto bad = run_cli({"race", "--config", config.string(), "--dry-run"});
  CHECK(bad.exit_code != 0);
  CHECK_THAT(bad.output, Contains("run 'cnn': model 'lenet' needs 1x28x28 images, not 1x1x4"));
}
