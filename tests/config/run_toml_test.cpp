// run.toml: every run folder holds its options as TOML, and `train --config` runs it again.
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "config/option_table.hpp"
#include "support/fixtures.hpp"
#include "support/sanitized.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

TEST_CASE("run.toml gives the options back", "[config]") {
  TrainerOptions o;
  for (const auto& [flag, text] :
       std::vector<std::pair<std::string, std::string>>{{"model", "mlp"},
                                                        {"hidden", "64,32"},
                                                        {"rule", "k-async"},
                                                        {"k", "2"},
                                                        {"workers", "4"},
                                                        {"delay", "exp:mean=10ms;w0=x4"},
                                                        {"lr", "0.1234567"},
                                                        {"time", "1h30m"},
                                                        {"clock", "virtual"},
                                                        {"seed", "7"},
                                                        {"eval-every", "250ms"}}) {
    REQUIRE(set_from_text(*find_option(flag), text, o).ok());
  }
  TempDir dir;
  std::ofstream(dir / "run.toml") << options_to_toml(o);
  const auto back = options_from_toml(dir / "run.toml");
  REQUIRE(back.ok());
  CHECK(options_to_json(*back) == options_to_json(o));
  CHECK(back->lr == o.lr);
  CHECK(back->time_s == 5400.0);
}

TEST_CASE("train --config run.toml runs a virtual-clock run again, byte for byte",
          "[config][cli]") {
  TempDir dir;
  const auto a = dir / "a", b = dir / "b";
  // Under ThreadSanitizer on 2 cores two identical mlp runs differ in evals.csv (the parallel
  // evaluation's 4th digit; pinned to one core they agree with each other and with the plain
  // build's bytes): an open question (docs/reliability.md, "Under the sanitizers"); softmax
  // there, mlp in the plain and ASan builds.
  const std::vector<std::string> model =
      kThreadSanitized ? std::vector<std::string>{"--model", "softmax"}
                       : std::vector<std::string>{"--model", "mlp", "--hidden", "32"};
  std::vector<std::string> args{"train",
                                "--rule",
                                "k-async",
                                "--k",
                                "2",
                                "--workers",
                                "4",
                                "--delay",
                                "exp:mean=10ms;w1=x3",
                                "--clock",
                                "virtual",
                                "--time",
                                "2s",
                                "--eval-every",
                                "0.5s",
                                "--seed",
                                "5",
                                "--no-progress",
                                "--out",
                                a.string()};
  args.insert(args.begin() + 1, model.begin(), model.end());
  auto r = run_cli(args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  REQUIRE(fs::exists(a / "run.toml"));
  r = run_cli(
      {"train", "--config", (a / "run.toml").string(), "--no-progress", "--out", b.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  for (const char* f :
       {"updates.csv", "gradients.csv", "evals.csv", "workers.csv", "summary.json", "run.toml"}) {
    INFO(f);
    CHECK(output_bytes(a / f) == output_bytes(b / f));
  }
  // A flag beside --config overrides the file.
  r = run_cli({"train", "--config", (a / "run.toml").string(), "--seed", "6", "--no-progress",
               "--out", (dir / "c").string()});
  REQUIRE(r.exit_code == 0);
  CHECK(output_bytes(a / "updates.csv") != output_bytes(dir / "c" / "updates.csv"));
  CHECK_THAT(slurp(dir / "c" / "run.toml"), Contains("seed = 6"));
}

TEST_CASE("train --config: an unknown key, a wrong type or --resume is one line, exit 2",
          "[config][cli]") {
  TempDir dir;
  std::ofstream(dir / "typo.toml") << "workers = 4\nwrkers = 4\n";
  std::ofstream(dir / "type.toml") << "workers = \"four\"\n";
  std::ofstream(dir / "broken.toml") << "workers = [\n";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--config", (dir / "typo.toml").string()},
       "typo.toml:2: unknown key 'wrkers' (did you mean 'workers'?)"},
      {{"--config", (dir / "type.toml").string()}, "type.toml:1: key 'workers' must be"},
      {{"--config", (dir / "broken.toml").string()}, "broken.toml:"},
      {{"--config", (dir / "missing.toml").string()}, "missing.toml"},
      {{"--config", (dir / "typo.toml").string(), "--resume", dir.path().string()},
       "--config and --resume exclude each other"},
  };
  for (const auto& [flags, expected] : cases) {
    std::vector<std::string> args{"train"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--iterations", "1", "--no-progress"});
    const auto r = run_cli(args);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.output) == 1);
    CHECK_THAT(r.output, Contains(expected));
  }
}
