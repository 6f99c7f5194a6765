// SSP on --engine mpi (docs/rules.md, "Baselines"): the gate lives in the server's round
// protocol, so worker ranks are held back as threads are; asserted from gradients.csv.
#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "engine/mpi/mpi_test_util.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd::test;

namespace {

// The workers of gradients.csv's rows, in update order.
std::vector<int> pushers(const std::filesystem::path& csv) {
  std::ifstream in(csv);
  REQUIRE(in.good());
  std::string line;
  std::getline(in, line);
  std::stringstream head(line);
  int column = 0, worker = -1;
  for (std::string f; std::getline(head, f, ','); ++column) {
    if (f == "worker") worker = column;
  }
  REQUIRE(worker >= 0);
  std::vector<int> out;
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::string f;
    for (int c = 0; c <= worker; ++c) std::getline(row, f, ',');
    out.push_back(std::stoi(f));
  }
  return out;
}

}  // namespace

TEST_CASE("mpi: ssp keeps every pusher within s + 1 gradients of the slowest",
          "[engine][mpi][ssp]") {
  require_mpi();
  const TempDir out;
  // 2 worker ranks x 2 threads: P = 4, worker 0 eight times slower.
  const auto r = mpi_train(3,
                           "--workers-per-rank 2 --rule ssp --staleness-bound 1 --delay "
                           "'exp:mean=2ms;w0=x8' --iterations 80 --eval-samples 1000 --out " +
                               out.path().string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto rows = pushers(out / "gradients.csv");
  REQUIRE(rows.size() == 80);
  std::vector<std::uint64_t> pushed(4, 0);
  std::uint64_t lead = 0;
  for (const int w : rows) {
    const auto mine = ++pushed[static_cast<std::size_t>(w)];
    lead = std::max(lead, mine - *std::min_element(pushed.begin(), pushed.end()));
  }
  CHECK(lead <= 2);
  CHECK(lead >= 1);
}
