// docs/cli.md documents every flag that `--help` shows, for every command.
#include <fstream>
#include <regex>
#include <string>

#include <catch2/catch.hpp>

#include "stalesgd/rules/rule_registry.hpp"
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
                                                                   {"race", "--help"},
                                                                   {"eval", "--help"},
                                                                   {"export", "--help"},
                                                                   {"calibrate", "--help"},
                                                                   {"serve", "--help"}}) {
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

TEST_CASE("docs/cli.md's rule table is the rule registry's", "[cli][docs][rules]") {
  std::ifstream in(std::filesystem::path(STALESGD_SOURCE_DIR) / "docs" / "cli.md");
  const std::string doc{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const auto help = run_cli({"train", "--help"});
  for (const stalesgd::RuleInfo* rule : stalesgd::registered_rules()) {
    INFO(rule->name);
    // A row "| `name` | K | summary |", and the name in `train --help`'s list.
    const auto at = doc.find("\n| `" + rule->name + "` | ");
    REQUIRE(at != std::string::npos);
    const std::string row = doc.substr(at + 1, doc.find('\n', at + 1) - at - 1);
    CHECK(row.ends_with(" | " + rule->summary + " |"));
    CHECK(help.output.find(rule->name) != std::string::npos);
  }
}
