// docs/cli.md documents every flag that `--help` shows, for every command.
#include <fstream>
#include <regex>

#include <catch2/catch.hpp>

#include "support/fixtures.hpp"

using namespace stalesgd::test;

TEST_CASE("docs/cli.md documents every flag of every command", "[cli][docs]") {
  std::ifstream in(std::filesystem::path(STALESGD_SOURCE_DIR) / "docs" / "cli.md");
  const std::string doc{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  REQUIRE(doc.size() > 1000);
  const std::regex flag(R"((--[a-z][a-z0-9-]+))");
  int flags = 0;
  for (const auto& command : std::vector<std::vector<std::string>>{{"data", "fetch", "--help"},
                                                                   {"data", "info", "--help"},
                                                                   {"train", "--help"},
                                                                   {"theory", "--help"},
                                                                   {"race", "--help"}}) {
    const auto help = run_cli(command);
    REQUIRE(help.exit_code == 0);
    for (std::sregex_iterator it(help.output.begin(), help.output.end(), flag), end; it != end;
         ++it) {
      const std::string f = (*it)[1];
      INFO(command[0] << ": " << f);
      CHECK(doc.find("`" + f) != std::string::npos);
      ++flags;
    }
  }
  CHECK(flags > 40);
}
