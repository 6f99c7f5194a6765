#include "support/summary.hpp"

#include <fstream>

#include <catch2/catch.hpp>

namespace stalesgd::test {

nlohmann::json read_summary(const std::filesystem::path& dir) {
  std::ifstream in(dir / "summary.json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

}  // namespace stalesgd::test
