#include "support/csv_column.hpp"

#include <algorithm>
#include <fstream>

#include <catch2/catch.hpp>

#include "serve/csv_journal.hpp"

namespace stalesgd::test {

std::vector<double> csv_column(const std::filesystem::path& path, const std::string& name) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const auto header = serve::split_csv_line(line);
  const auto at = std::find(header.begin(), header.end(), name);
  INFO(path.string() << ": " << line);
  REQUIRE(at != header.end());
  std::vector<double> out;
  while (std::getline(in, line)) {
    out.push_back(serve::csv_number(serve::split_csv_line(line).at(at - header.begin())));
  }
  return out;
}

}  // namespace stalesgd::test
