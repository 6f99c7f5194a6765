// Provenance: ISO 8601 UTC times and a command line a shell reads back word for word.
#include <catch2/catch.hpp>

#include "output/provenance.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

TEST_CASE("times are ISO 8601 UTC with milliseconds", "[provenance]") {
  // 2026-11-30T18:40:00.123Z
  const std::chrono::system_clock::time_point t{std::chrono::milliseconds(1796064000123LL)};
  CHECK(iso8601_utc(t) == "2026-11-30T18:40:00.123Z");
}

TEST_CASE("the command line is quoted so that a shell reads back the same words", "[provenance]") {
  const std::vector<std::string> words{
      "stalesgd",           "train", "--delay", "w3:crash@2s;w5:hang@4s", "--label",
      "it's \"odd\" $HOME", "",      "--k=4"};
  const std::string line = shell_quoted(words);
  CHECK(line.rfind("stalesgd train --delay 'w3:crash@2s;w5:hang@4s' ", 0) == 0);
  // printf prints each word on its own line between brackets: the shell split it back exactly.
  const auto r = run_shell("printf '[%s]\\n' " + line.substr(line.find(' ') + 1));
  REQUIRE(r.exit_code == 0);
  std::string expected;
  for (std::size_t i = 1; i < words.size(); ++i) expected += "[" + words[i] + "]\n";
  CHECK(r.output == expected);
}
