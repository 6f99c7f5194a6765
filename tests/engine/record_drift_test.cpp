// --record-drift (docs/theory.md, "Error"): each update's drift_sq is |w_j - w_tau|^2 of its
// stale gradients, checked against the updates it drifted over, and grad_sq is |g|^2.
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "support/fixtures.hpp"

using namespace stalesgd::test;
using Catch::Matchers::Contains;

namespace {

// updates.csv's rows as text fields.
std::vector<std::vector<std::string>> rows_of(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  std::getline(in, line);
  REQUIRE(
      line ==
      "iteration,wall_s,n_grads,mean_staleness,max_staleness,lr,minibatch_loss,drift_sq,grad_sq");
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream s(line);
    for (std::string f; std::getline(s, f, ',');) fields.push_back(f);
    if (line.back() == ',') fields.emplace_back();  // an empty last field
    REQUIRE(fields.size() == 9);
    rows.push_back(fields);
  }
  return rows;
}

}  // namespace

TEST_CASE("record drift: an async gradient one update stale drifted by that update, lr^2 |g|^2",
          "[engine][theory]") {
  TempDir dir;
  const std::string run = kCli +
                          " train --model softmax --rule async --workers 2 --clock virtual "
                          "--delay exp:mean=10ms --iterations 300 --lr 0.05 --no-progress";
  REQUIRE(run_shell(run + " --record-drift --out " + (dir / "drift").string()).exit_code == 0);
  const auto rows = rows_of(dir / "drift" / "updates.csv");
  REQUIRE(rows.size() == 300);
  int checked = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    INFO("iteration " << rows[i][0]);
    CHECK_FALSE(rows[i][8].empty());  // every update's gradients have a norm
    const int staleness = std::stoi(rows[i][4]);
    if (staleness == 0) {
      CHECK(rows[i][7].empty());  // nothing stale, nothing drifted
    } else if (staleness == 1) {
      // Its w_tau is the version before the current one: w_j - w_tau = -lr g of the last update.
      const double drift = std::stod(rows[i][7]);
      const double last = 0.05 * 0.05 * std::stod(rows[i - 1][8]);
      CHECK(drift == Approx(last).epsilon(1e-3));
      ++checked;
    }
  }
  CHECK(checked > 50);
  // Without the flag the columns are there and empty; the run is otherwise the same run.
  REQUIRE(run_shell(run + " --out " + (dir / "plain").string()).exit_code == 0);
  const auto plain = rows_of(dir / "plain" / "updates.csv");
  REQUIRE(plain.size() == rows.size());
  for (std::size_t i = 0; i < plain.size(); ++i) {
    CHECK(plain[i][7].empty());
    CHECK(plain[i][8].empty());
    CHECK(plain[i][6] == rows[i][6]);  // the same minibatch losses
  }
}

TEST_CASE("record drift: refused where there is no server, in one line", "[engine][cli]") {
  for (const char* flags : {"--sequential", "--server hogwild --rule async --workers 2"}) {
    INFO(flags);
    const auto r = run_shell(kCli + " train --record-drift --iterations 5 " + flags);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.output) == 1);
    CHECK_THAT(r.output, Contains("--record-drift") && Contains("has no server"));
  }
}
