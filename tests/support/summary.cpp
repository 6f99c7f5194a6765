#include "support/summary.hpp"

#include "support/fixtures.hpp"

#include <fstream>

#include <catch2/catch.hpp>

namespace stalesgd::test {

nlohmann::json read_summary(const std::filesystem::path& dir) {
  std::ifstream in(dir / "summary.json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

std::string summary_status(const std::filesystem::path& dir) {
  std::ifstream in(dir / "summary.json");
  if (!in) return {};
  const auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j.value("status", std::string("no status")) : std::string("unreadable");
}

}  // namespace stalesgd::test
