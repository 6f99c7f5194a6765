// stalesgd(1) (tools/cli/man_page.cpp): generated from the option tables --help prints, so every
// flag of every command is in it, and groff reads it without a warning.
#include <regex>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "config/option_table.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

namespace {

// "--flag" tokens of a help text.
std::set<std::string> flags_of(const std::string& help) {
  std::set<std::string> out;
  const std::regex flag(R"(--[a-z][a-z0-9-]*)");
  for (auto it = std::sregex_iterator(help.begin(), help.end(), flag); it != std::sregex_iterator();
       ++it) {
    out.insert(it->str());
  }
  return out;
}

// How roff spells a flag: each '-' a minus.
std::string roff_flag(const std::string& flag) {
  return std::regex_replace(flag, std::regex("-"), "\\-");
}

}  // namespace

TEST_CASE("man page: every command's flags, from the tables --help prints, read by groff",
          "[cli]") {
  const auto page = run_shell(kCli + " --man 2>&1");
  REQUIRE(page.exit_code == 0);
  REQUIRE(page.output.rfind(".TH STALESGD 1 ", 0) == 0);
  // The option table's flags, each described as in `train --help`.
  for (const auto& option : train_options()) {
    INFO(option.name);
    CHECK(page.output.find("\\fB" + roff_flag("--" + std::string(option.name)) + "\\fR") !=
          std::string::npos);
  }
  // Every flag each command's --help lists.
  for (const char* command : {"train", "race", "theory", "theory --error", "eval", "export",
                              "serve", "data fetch", "data info"}) {
    const auto help = run_shell(kCli + " " + command + " --help");
    REQUIRE(help.exit_code == 0);
    INFO(command);
    CHECK(page.output.find(".SS \"stalesgd " + roff_flag(command)) != std::string::npos);
    for (const auto& flag : flags_of(help.output)) {
      INFO(flag);
      CHECK(page.output.find(roff_flag(flag)) != std::string::npos);
    }
  }
  // groff (tools/setup.sh test installs groff-base) formats it without a warning.
  REQUIRE(run_shell("command -v groff").exit_code == 0);
  const auto warnings = run_shell(kCli + " --man | groff -man -Tutf8 -ww -z");
  CHECK(warnings.exit_code == 0);
  CHECK(warnings.output.empty());
}
