// The machine model through the binary (docs/machine.md): `calibrate` writes a machine file that
// `theory` and `train --clock virtual` take; a virtual run on a modelled machine keeps the
// theory's pace; bad machine input is one line and a non-zero exit.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/fixtures.hpp"
#include "support/summary.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

TEST_CASE("machine CLI: calibrate writes a machine file that theory and a virtual run take",
          "[theory][machine][cli]") {
  TempDir dir;
  const std::string file = (dir / "softmax.json").string();
  auto cal = run_cli({"calibrate", "--model", "softmax", "--budget", "0.4s", "--out", file});
  INFO(cal.output);
  REQUIRE(cal.exit_code == 0);
  const auto m = nlohmann::json::parse(slurp(file));
  CHECK(m["model"] == "softmax");
  CHECK(m["parameters"] == 7850);
  CHECK(m["compute_s"].get<double>() > 0.0);
  CHECK(m["contention"].get<double>() >= 1.0);

  // theory on 1 core: P = 4 workers of C each, one at a time, plus the server's work.
  auto t =
      run_cli({"theory", "--machine", file, "--cores", "1", "--workers", "4", "--rule", "async",
               "--delay", "none", "--json", "--samples", "2000", "--saturation-max", "64"});
  INFO(t.output);
  REQUIRE(t.exit_code == 0);
  const auto j = nlohmann::json::parse(t.output);
  const double per_update = m["compute_s"].get<double>() + m["server_gradient_s"].get<double>() +
                            m["server_update_s"].get<double>();
  CHECK(j["rules"][0]["monte_carlo"]["seconds_per_iteration"].get<double>() ==
        Approx(per_update).epsilon(1e-6));
  CHECK(j["rules"][0]["server"]["shards"].size() == 5);
  CHECK_FALSE(j["rules"][0].contains("closed_form"));  // the paper's forms are the free machine's

  // A virtual run on that machine: its clock runs at the theory's pace, and summary.json's
  // prediction is the machine's. The start (four workers sharing one core at once) costs about
  // one update more than the steady state; 2000 iterations keep it under the 1e-3 tolerance even
  // where the server's share is large (a sanitizer build: 1e-3 measured at 400).
  const auto out = dir / "run";
  auto r = run_cli({"train", "--model",      "softmax", "--rule",       "async", "--workers",
                    "4",     "--clock",      "virtual", "--machine",    file,    "--cores",
                    "1",     "--iterations", "2000",    "--eval-every", "1000s", "--no-progress",
                    "--out", out.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto s = read_summary(out);
  CHECK(s["seconds_per_iteration"].get<double>() == Approx(per_update).epsilon(1e-3));
  CHECK(s["theory"]["seconds_per_iteration"].get<double>() == Approx(per_update).epsilon(1e-3));
  CHECK_THAT(slurp(out / "run.log"), Contains("machine: 1 cores"));
}

TEST_CASE("machine CLI: bad machine input is one line and a non-zero exit",
          "[theory][machine][cli]") {
  TempDir dir;
  const std::string mlp = (dir / "mlp.json").string();
  REQUIRE(run_cli({"calibrate", "--model", "mlp", "--budget", "0.2s", "--out", mlp}).exit_code ==
          0);
  const std::vector<std::string> theory{"theory", "--rule", "async", "--delay", "exp:mean=1ms"};
  const std::vector<std::string> train{
      "train",        "--clock", "virtual", "--iterations", "10", "--out", (dir / "run").string(),
      "--no-progress"};
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--cores", "0"}, "--cores 0"},
      {{"--server-time", "-1ms"}, "--server-time '-1ms'"},
      {{"--server-time", "nan"}, "--server-time 'nan'"},
      {{"--server-time", "auto"}, "give --model M"},
      {{"--link", "latency=1ms,jitter=2ms"}, "unknown key 'jitter'"},
      {{"--link", "bandwidth=1Gbyte"}, "unknown unit 'Gbyte'"},
      {{"--link", "bandwidth=1Gbit"}, "needs the size of a message"},
      {{"--link", "latency=1us,medium=disk"}, "medium 'disk' must be network or memory"},
      {{"--machine", mlp, "--model", "softmax"}, "calibrated for --model mlp, not softmax"},
      {{"--machine", (dir / "none.json").string()}, "none.json: file not found"},
  };
  for (const auto& [flags, expected] : cases) {
    for (const auto* base : {&theory, &train}) {
      if (base == &train && flags[0] == "--server-time" && flags[1] == "auto") continue;
      if (base == &train && flags[1] == "bandwidth=1Gbit") continue;  // sized by the model
      std::vector<std::string> args = *base;
      args.insert(args.end(), flags.begin(), flags.end());
      if (base == &train && flags[0] == "--machine" && flags.size() == 2) {
        args.insert(args.end(), {"--model", "mlp"});
      }
      auto r = run_cli(args);
      INFO(args[0] << " " << flags[0] << " " << flags[1] << ": " << r.output);
      CHECK(r.exit_code != 0);
      CHECK(line_count(r.output) == 1);
      CHECK_THAT(r.output, Contains(expected));
    }
  }
  // calibrate's --out in a folder that does not exist: said before anything is measured.
  auto no_folder =
      run_cli({"calibrate", "--model", "mlp", "--out", (dir / "none" / "m.json").string()});
  CHECK(no_folder.exit_code == 1);
  CHECK(line_count(no_folder.output) == 1);
  CHECK_THAT(no_folder.output, Contains("does not exist"));
  CHECK_THAT(no_folder.output, Contains("stalesgd: error: --out "));
  // The machine is the virtual clock's: the real clock runs on this one.
  auto real = run_cli({"train", "--cores", "2", "--iterations", "10", "--no-progress"});
  CHECK(real.exit_code == 2);
  CHECK(line_count(real.output) == 1);
  CHECK_THAT(real.output, Contains("add --clock virtual"));
}
