// `train --set KEY=VALUE` and a bare KEY=VALUE: the experiment file's keys on train's command
// line (docs/cli.md), written to run.toml as if given as flags; their bad input.
#include <catch2/catch.hpp>

#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

TEST_CASE("train --set sets options by their experiment keys, as their flags would",
          "[config][cli]") {
  TempDir dir;
  const std::vector<std::string> common{"train",        "--model",      "softmax", "--clock",
                                        "virtual",      "--iterations", "40",      "--delay",
                                        "exp:mean=5ms", "--no-progress"};
  auto with = [&](std::vector<std::string> extra, const fs::path& out) {
    std::vector<std::string> args = common;
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--out", out.string()});
    const auto r = run_cli(args);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
  };
  with({"--set", "lr=0.1", "--set", "workers=4", "--set", "rule=k-async", "--set", "k=2"},
       dir / "set");
  with({"--lr", "0.1", "--workers", "4", "--rule", "k-async", "--k", "2"}, dir / "flags");
  // A bare KEY=VALUE, and --set=KEY=VALUE, are --sets too.
  with({"lr=0.1", "--set=workers=4", "rule=k-async", "k=2"}, dir / "bare");
  const std::string toml = slurp(dir / "set" / "run.toml");
  CHECK_THAT(toml, Contains("workers = 4"));
  CHECK_THAT(toml, Contains("rule = 'k-async'"));
  for (const char* f : {"run.toml", "updates.csv", "gradients.csv"}) {
    INFO(f);
    CHECK(output_bytes(dir / "set" / f) == output_bytes(dir / "flags" / f));
    CHECK(output_bytes(dir / "bare" / f) == output_bytes(dir / "flags" / f));
  }
}

TEST_CASE("train --set: an unknown key, a sweep, a key given twice or a bad value is one line",
          "[config][cli]") {
  TempDir dir;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--set", "lr_rte=0.1"}, "unknown key 'lr_rte' (did you mean 'lr_rule'?)"},
      {{"--set", "wrkers=4"}, "did you mean 'workers'?"},
      {{"--set", "lr=0.1,0.2"}, "train runs one run"},
      {{"--set", "lr=0.1", "--lr", "0.2"}, "lr is given twice"},
      {{"--set", "lr=0.1", "lr=0.2"}, "lr is given twice"},
      {{"--set", "workers=x"}, "--workers 'x'"},
      {{"--set", "seeds=1"}, "train runs one seed"},
      {{"--set"}, "--set needs a value"},
  };
  for (const auto& [flags, expected] : cases) {
    std::vector<std::string> args{"train",         "--iterations", "1",
                                  "--no-progress", "--out",        (dir / "never").string()};
    args.insert(args.end(), flags.begin(), flags.end());
    const auto r = run_cli(args);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.output) == 1);
    CHECK_THAT(r.output, Contains(expected));
    CHECK_FALSE(fs::exists(dir / "never"));
  }
}
