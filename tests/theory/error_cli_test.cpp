// `stalesgd theory --error`: JSON with the constants, one row per K and the best K per budget;
// one-line errors for a loss that is not strongly convex.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/fixtures.hpp"

using namespace stalesgd::test;
using Catch::Matchers::Contains;

namespace {
std::vector<std::string> base() {
  return {"theory",
          "--error",
          "--data-dir",
          repo_data_dir().string(),
          "--workers",
          "4",
          "--delay",
          "exp:mean=10ms",
          "--samples",
          "1000",
          "--constants-samples",
          "1000",
          "--optimum-epochs",
          "2"};
}
}  // namespace

TEST_CASE("theory --error predicts each K and the best K per budget", "[error][theory][cli]") {
  auto args = base();
  for (const char* a : {"--l2", "1e-3", "--rule", "k-sync", "--budget", "10ms,1s", "--json"})
    args.emplace_back(a);
  auto r = run_cli(args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.output);
  REQUIRE(j["rules"].size() == 3);  // K = 1, 2, 4
  CHECK(j["constants"]["c"].get<double>() == Approx(1e-3));
  // F* on evals.csv's train_objective terms (tools/error_figures.py subtracts it).
  CHECK(j["constants"]["train_objective_star"].get<double>() >
        j["constants"]["train_loss_star"].get<double>());
  // Lemma 1's floor falls as 1/K.
  CHECK(j["rules"][0]["floor"].get<double>() == Approx(2 * j["rules"][1]["floor"].get<double>()));
  REQUIRE(j["budgets"].size() == 2);
  CHECK(j["budgets"][0]["errors"].size() == 3);
  CHECK(j["budgets"][1].contains("best_k"));
}

TEST_CASE("theory --error applies Theorem 3 to k-async with the given p0 and gamma",
          "[error][theory][cli]") {
  auto args = base();
  for (const char* a :
       {"--l2", "1e-3", "--rule", "k-async", "--k", "2", "--p0", "0.5", "--gamma", "0.2", "--json"})
    args.emplace_back(a);
  auto r = run_cli(args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.output);
  REQUIRE(j["rules"].size() == 1);
  const auto& row = j["rules"][0];
  CHECK(row["theorem"] == "Theorem 3");
  CHECK(row["gamma_prime"].get<double>() == Approx(1 - 0.2 + 0.25));
  CHECK(row["mean_staleness"].get<double>() > 0.0);
}

TEST_CASE("theory --error refuses l2 = 0 and non-convex models in one line",
          "[error][theory][cli]") {
  auto args = base();
  args.emplace_back("--l2");
  args.emplace_back("0");
  auto r = run_cli(args);
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.output, Contains("not strongly convex"));
  CHECK(line_count(r.output) == 1);
  auto m = base();
  for (const char* a : {"--l2", "1e-3", "--model", "mlp"}) m.emplace_back(a);
  r = run_cli(m);
  CHECK(r.exit_code != 0);
  CHECK(line_count(r.output) == 1);
  CHECK(run_cli({"theory", "--help"}).output.find("--error") != std::string::npos);
}
