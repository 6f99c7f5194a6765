// `stalesgd calibrate` under mpirun (docs/machine.md, "Calibration"): ranks 0 and 1 ping-pong
// from one float to the model's message, and the machine file's link is the line through that
// curve, a memory link when the two ranks share a host; a failure before the ping-pong is one
// line on every rank, not a hang.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "engine/mpi/mpi_test_util.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

TEST_CASE("mpi calibrate: the link from a ping-pong between ranks 0 and 1", "[mpi][machine]") {
  require_mpi();
  TempDir dir;
  const std::string file = (dir / "softmax.json").string();
  // Three ranks: the third waits out the ping-pong and the measurements.
  auto r = run_mpi_shell("timeout 120 tools/mpirun.sh -np 3 " STALESGD_CLI
                         " calibrate --model softmax --budget 1.2s --out " +
                         file);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("memory: one host"));
  const auto m = nlohmann::json::parse(slurp(file));
  CHECK(m["link_medium"] == "memory");
  CHECK(m["link_latency_s"].get<double>() > 0.0);
  // 0 (no limit) only when the round trip did not grow with the message, as on a busy machine.
  const double bandwidth = m["link_bandwidth_bps"].get<double>();
  CHECK(bandwidth >= 0.0);
  CHECK(m["compute_s"].get<double>() > 0.0);
  const auto& how = m["calibration"];
  CHECK(how["ranks"] == 3);
  CHECK(how["hosts"][0] == how["hosts"][1]);
  const auto& curve = how["ping_pong"];
  REQUIRE(curve.size() >= 2);
  CHECK(curve.front()["bytes"] == 4.0);
  CHECK(curve.back()["bytes"] == 4.0 * 7850);  // the model's message
  // The fit passes through the smallest message's round trip, and the largest's unless flat.
  CHECK(curve.front()["fitted_round_trip_s"].get<double>() ==
        Approx(curve.front()["round_trip_s"].get<double>()).epsilon(1e-6));
  if (bandwidth > 0.0) {
    CHECK(curve.back()["fitted_round_trip_s"].get<double>() ==
          Approx(curve.back()["round_trip_s"].get<double>()).epsilon(1e-6));
  }

  // theory takes the file: a memory link's copies are CPU work, so on 1 core one worker's
  // gradient costs C, two copies and the server's work, plus two latencies.
  auto t =
      run_cli({"theory", "--machine", file, "--cores", "1", "--workers", "1", "--rule", "async",
               "--delay", "none", "--json", "--samples", "500", "--saturation-max", "1"});
  INFO(t.output);
  REQUIRE(t.exit_code == 0);
  const double copy = bandwidth > 0.0 ? 8.0 * 4.0 * 7850 / bandwidth : 0.0;
  const double expected = m["compute_s"].get<double>() + m["server_gradient_s"].get<double>() +
                          m["server_update_s"].get<double>() + 2 * copy +
                          2 * m["link_latency_s"].get<double>();
  CHECK(nlohmann::json::parse(t.output)["rules"][0]["monte_carlo"]["seconds_per_iteration"]
            .get<double>() == Approx(expected).epsilon(1e-6));
}

TEST_CASE("mpi calibrate: a failure on rank 0 before the ping-pong ends every rank",
          "[mpi][machine]") {
  require_mpi();
  TempDir dir;
  auto r = run_mpi_shell("timeout 60 tools/mpirun.sh -np 2 " STALESGD_CLI
                         " calibrate --model softmax --budget 0.2s --out " +
                         (dir / "missing" / "m.json").string());
  INFO(r.output);
  CHECK(r.exit_code != 0);
  CHECK(r.exit_code != 124);  // not the timeout: no rank waited for a ping-pong
  CHECK_THAT(r.output, Contains("its folder"));
  CHECK_THAT(r.output, Contains("does not exist"));
}
