// A rule as a plug-in (stalesgd/plugin.hpp) through the CLI: examples/custom_rule's
// capped-k-async with its own --cap and its own checkpointed state, loaded by train, race and
// theory, --fit included (serve and the MPI engine in tests/install/plugin_test.sh, against the
// installed package), and the plug-ins the CLI refuses, one line each, exit 2, nothing written.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "stalesgd/plugin.hpp"
#include "support/csv_column.hpp"
#include "support/fixtures.hpp"
#include "support/summary.hpp"

using namespace stalesgd::test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
namespace fs = std::filesystem;

namespace {

std::string plugin(const std::string& name) {
  return (fs::path(STALESGD_TEST_PLUGIN_DIR) / ("lib" + name + ".so")).string();
}

// A virtual-clock run of capped-k-async: worker 0 is 8 times slower than the others, so its
// gradients arrive many versions late.
std::string capped_run(const std::string& extra) {
  return "train --plugin " + plugin("capped_k_async") +
         " --rule capped-k-async --k 2 --workers 8 --delay 'exp:mean=10ms;w0=x8' --clock virtual "
         "--iterations 300 --eval-every 1000s --no-progress " +
         extra;
}

}  // namespace

TEST_CASE("plugin CLI: a plug-in's rule and its option reach --help, train and summary.json",
          "[rules][plugin][cli]") {
  const auto help = run_shell(kCli + " train --plugin " + plugin("capped_k_async") + " --help");
  INFO(help.output);
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.output, Contains("capped-k-async") && Contains("--cap") &&
                              Contains("capped-k-async: the stalest gradient an"));
  // Without the plug-in neither is known.
  const auto bare = run_cli({"train", "--rule", "capped-k-async", "--k", "2", "--iterations", "5"});
  CHECK(bare.exit_code == 2);
  CHECK_THAT(bare.output, Contains("unknown rule 'capped-k-async'"));

  TempDir dir;
  for (const int cap : {0, 3}) {
    const fs::path out = dir / ("cap" + std::to_string(cap));
    const auto r = run_shell(kCli + " " +
                             capped_run("--cap " + std::to_string(cap) + " --out " + out.string()));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    // The rule's semantics from the recorded gradients: none staler than the cap.
    for (const double st : csv_column(out / "gradients.csv", "staleness")) CHECK(st <= cap);
    const auto s = read_summary(out);
    CHECK(s["config"]["rule"] == "capped-k-async");
    CHECK(s["config"]["cap"] == cap);
    CHECK(s["config"]["plugin"] == plugin("capped_k_async"));
    REQUIRE(s["provenance"]["plugins"].size() == 1);
    CHECK(s["provenance"]["plugins"][0]["path"] == plugin("capped_k_async"));
    CHECK(s["provenance"]["plugins"][0]["crc32"].get<std::string>().size() == 8);
  }
  // k-async on the same delays applies gradients past the cap: the cap is doing the work.
  const auto k_async = run_shell(kCli +
                                 " train --rule k-async --k 2 --workers 8 --delay "
                                 "'exp:mean=10ms;w0=x8' --clock virtual --iterations 300 "
                                 "--eval-every 1000s --no-progress --out " +
                                 (dir / "k-async").string());
  REQUIRE(k_async.exit_code == 0);
  double stalest = 0;
  for (const double st : csv_column(dir / "k-async" / "gradients.csv", "staleness")) {
    stalest = std::max(stalest, st);
  }
  CHECK(stalest > 3);
  // The plug-in named as a setting (--set plugin=X, --set=plugin=X, the bare plugin=X) is loaded
  // first as well, so that the rule and its option are known to the words before it.
  for (const std::string words : {"--set plugin=", "--set=plugin=", "plugin="}) {
    const fs::path out = dir / "set";
    const auto r = run_shell(kCli +
                             " train --set rule=capped-k-async --set cap=1 --k 2 --workers 8 "
                             "--delay 'exp:mean=10ms;w0=x8' --clock virtual --iterations 300 "
                             "--eval-every 1000s --no-progress --force --out " +
                             out.string() + " " + words + plugin("capped_k_async"));
    INFO(words << ": " << r.output);
    REQUIRE(r.exit_code == 0);
    for (const double st : csv_column(out / "gradients.csv", "staleness")) CHECK(st <= 1);
  }
  // Its option out of range, or given to another rule: one line, exit 2.
  const auto bad = run_shell(kCli + " " + capped_run("--cap -1 --out " + (dir / "bad").string()));
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.output, Contains("--cap -1: must be an integer S with 0 <= S <= 1000000"));
  const auto other = run_shell(kCli + " train --plugin " + plugin("capped_k_async") +
                               " --rule k-async --k 2 --cap 1 --iterations 5 --no-progress");
  CHECK(other.exit_code == 2);
  CHECK_THAT(other.output, Contains("--cap applies to --rule capped-k-async only, not k-async"));
}

TEST_CASE(
    "plugin CLI: a race sweeps a plug-in's option, and theory predicts its rule and fits its runs",
    "[rules][plugin][cli]") {
  TempDir dir;
  write_text(dir / "capped.toml",
             "name = \"capped\"\n"
             "plugin = \"" +
                 plugin("capped_k_async") +
                 "\"\n"
                 "model = \"softmax\"\nworkers = 8\nk = 2\nrule = \"capped-k-async\"\n"
                 "delay = \"exp:mean=10ms;w0=x8\"\nclock = \"virtual\"\niterations = 200\n"
                 "eval_every = \"1000s\"\n"
                 "[[run]]\nlabel = \"cap {cap}\"\ncap = [0, 2]\n");
  const auto race = run_cli({"race", "--config", (dir / "capped.toml").string(), "--out",
                             (dir / "race").string(), "--no-progress"});
  INFO(race.output);
  REQUIRE(race.exit_code == 0);
  for (const int cap : {0, 2}) {
    const auto rows =
        csv_column(dir / "race" / ("cap-" + std::to_string(cap)) / "gradients.csv", "staleness");
    REQUIRE_FALSE(rows.empty());
    for (const double st : rows) CHECK(st <= cap);
  }
  const auto theory = run_shell(kCli + " theory --plugin " + plugin("capped_k_async") +
                                " --rule capped-k-async --k 2 --cap 1 --workers 8 --delay "
                                "exp:mean=10ms --samples 4000 --json");
  INFO(theory.output);
  REQUIRE(theory.exit_code == 0);
  CHECK_THAT(theory.output, Contains("\"rule\": \"capped-k-async\"") && Contains("\"cap\": 1") &&
                                Contains("monte_carlo"));
  // --fit on a run of the race loads the plug-in its summary.json names, as --resume loads a
  // checkpoint's, and predicts the run's rule from the fit.
  const auto fit = run_cli({"theory", "--fit", (dir / "race" / "cap-2").string(), "--json"});
  INFO(fit.output);
  REQUIRE(fit.exit_code == 0);
  CHECK_THAT(fit.output, Contains("\"rule\": \"capped-k-async\""));
}

TEST_CASE("plugin CLI: a plug-in that cannot be used is one line, exit 2, and writes nothing",
          "[rules][plugin][cli]") {
  TempDir dir;
  write_text(dir / "text.so", "not a shared library\n");
  const std::vector<std::pair<std::string, std::string>> cases{
      {(dir / "missing.so").string(), "file not found"},
      {(dir / "text.so").string(), "cannot be loaded as a shared library ("},
      {plugin("no_entry"), "a shared library without stalesgd's entry points"},
      {plugin("wrong_abi"), "built against plug-in interface " +
                                std::to_string(STALESGD_PLUGIN_ABI + 1) +
                                ", and this stalesgd has " + std::to_string(STALESGD_PLUGIN_ABI)},
      {plugin("taken_name"), "register_rule: 'k-async' is registered already"},
      {plugin("clashing_option"), "rule 'batchy' declares --batch, which is stalesgd train's own"},
      {plugin("throws"), "its registration threw: the plug-in's configuration file is missing"},
  };
  for (const auto& [path, expected] : cases) {
    INFO(path);
    const fs::path out = dir / "run";
    for (const std::string command : {"train", "theory", "race"}) {
      INFO(command);
      const auto r = run_cli({command, "--plugin", path, "--out", out.string()});
      INFO(r.output);
      CHECK(r.exit_code == 2);
      CHECK(line_count(r.output) == 1);
      CHECK_THAT(r.output,
                 StartsWith("stalesgd: error: --plugin " + path + ": ") && Contains(expected));
      CHECK_FALSE(fs::exists(out));
    }
  }
}
