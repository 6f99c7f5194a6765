// `stalesgd theory --fit RUN_DIR`: on a virtual-clock run with shifted-exponential delays it
// recovers the shift (plus the compute time the delay mode adds) and the mean, picks
// shifted-exp and prints a spec that `train --delay` accepts; a damaged or missing
// gradients.csv, or one without durations, gets one line and a non-zero exit.
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/fixtures.hpp"

using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

// A short virtual-clock async run (about 1,400 gradients) with 1 ms of compute per minibatch.
void train_run(const fs::path& out, const std::string& mode) {
  const auto r = run_cli({"train",
                          "--model",
                          "softmax",
                          "--clock",
                          "virtual",
                          "--rule",
                          "async",
                          "--workers",
                          "4",
                          "--delay",
                          "shifted-exp:shift=5ms,mean=5ms",
                          "--delay-mode",
                          mode,
                          "--compute-time",
                          "1ms",
                          "--time",
                          "4s",
                          "--eval-every",
                          "100s",
                          "--eval-samples",
                          "500",
                          "--no-progress",
                          "--out",
                          out.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
}

double param(const nlohmann::json& fit, const std::string& family, const std::string& name) {
  for (const auto& f : fit["families"]) {
    if (f["family"] == family) return f["parameters"][name].get<double>();
  }
  FAIL("no family " << family);
  return 0.0;
}

}  // namespace

TEST_CASE("theory --fit recovers a virtual run's shifted-exponential durations",
          "[theory][cli][fit]") {
  // add: a minibatch takes C + X = 1ms + 5ms + Exp(5ms), so the fitted shift is 6 ms; pad:
  // max(C, X) = X (X >= 5 ms > C), so it is 5 ms. The mean of the exponential part is 5 ms.
  const std::string mode = GENERATE("add", "pad");
  const double shift = mode == "add" ? 0.006 : 0.005;
  INFO("--delay-mode " << mode);
  TempDir run;
  train_run(run.path(), mode);
  const auto r = run_cli({"theory", "--fit", run.path().string(), "--samples", "2000", "--json"});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.output);
  CHECK(j["durations"]["n"].get<int>() > 1000);
  CHECK(j["chosen"]["family"] == "shifted-exp");
  CHECK(param(j, "shifted-exp", "shift") == Approx(shift).epsilon(0.15));
  CHECK(param(j, "shifted-exp", "mean") == Approx(0.005).epsilon(0.15));
  CHECK(j["compute"]["beyond_delay_s"].get<double>() == 0.001);
  CHECK(j["warnings"].empty());  // the fit's mean is the durations' (async: no cut minibatches)
  // The spec holds 4 significant digits.
  CHECK(j["chosen"]["mean_s"].get<double>() ==
        Approx(j["durations"]["mean_s"].get<double>()).epsilon(1e-3));
  // Every rule at K = 1, 2, 4 (P = 4), and the run's own time against its prediction.
  CHECK(j["rules"].size() >= 14);
  CHECK(j["measured"]["rule"] == "async");
  CHECK(j["measured"]["ratio"].get<double>() == Approx(1.0).epsilon(0.15));

  // The chosen spec is a delay spec train accepts.
  const std::string spec = j["chosen"]["spec"].get<std::string>();
  TempDir again;
  const auto t = run_cli({"train", "--model", "softmax", "--clock", "virtual", "--rule", "async",
                          "--workers", "2", "--delay", spec, "--iterations", "5", "--eval-samples",
                          "100", "--no-progress", "--out", again.path().string()});
  INFO(t.output);
  CHECK(t.exit_code == 0);

  // The table names the chosen family and the run's own ratio.
  const auto text = run_cli({"theory", "--fit", run.path().string(), "--samples", "1000"});
  CHECK(text.exit_code == 0);
  CHECK_THAT(text.output, Contains("<- chosen") && Contains("--delay '" + spec + "'") &&
                              Contains("measured / predicted"));
}

TEST_CASE("theory --fit refuses a damaged, missing or duration-less gradients.csv in one line",
          "[theory][cli][fit]") {
  TempDir run;
  train_run(run.path(), "add");
  const fs::path csv = run / "gradients.csv";
  std::string original;
  {
    std::ifstream in(csv);
    original.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto expect_one_line = [&](const std::string& expected) {
    const auto r = run_cli({"theory", "--fit", run.path().string()});
    INFO(r.output);
    CHECK(r.exit_code != 0);
    CHECK(line_count(r.output) == 1);
    CHECK_THAT(r.output, Contains(expected));
  };
  write_text(csv, original + "9999,0,0,0,abc\n");
  expect_one_line("line");
  write_text(csv, original + "9999,0,0\n");
  expect_one_line("damaged");
  write_text(csv, "iteration,worker,computed_on_version,staleness\n1,0,0,0\n");
  expect_one_line("no duration_s column");
  write_text(csv, "iteration,worker,computed_on_version,staleness,duration_s\n1,0,0,0,0.1\n");
  expect_one_line("too few");
  fs::remove(csv);
  expect_one_line("gradients.csv");
  write_text(csv, original);
  fs::remove(run / "summary.json");
  expect_one_line("summary.json is missing");
  write_text(run / "summary.json", "{\"config\": ");
  expect_one_line("summary.json is damaged");
  write_text(run / "summary.json", "{\"status\": \"running\", \"config\": {}}");
  expect_one_line("says the run is still running");

  const auto both = run_cli({"theory", "--fit", run.path().string(), "--delay", "exp:mean=1ms"});
  CHECK(both.exit_code == 2);
  CHECK_THAT(both.output, Contains("--fit takes P and the delays from the run"));
}
