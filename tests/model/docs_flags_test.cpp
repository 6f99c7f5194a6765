// docs/models.md names no flag a command lacks: every `--flag` it gives is in the --help of the
// command it is given to (`stalesgd train` unless the paragraph or command line names another),
// or among the arguments of the tools/*.py script it is given to.
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>

#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

namespace {

std::string read_source(const std::string& relative) {
  std::ifstream in(std::string(STALESGD_SOURCE_DIR) + "/" + relative);
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::set<std::string> flags_in(const std::string& text) {
  static const std::regex flag(R"((?:^|[\s'"(\[=])(--[a-z][a-z0-9-]*))");
  std::set<std::string> found;
  for (std::sregex_iterator it(text.begin(), text.end(), flag), end; it != end; ++it) {
    found.insert((*it)[1].str());
  }
  return found;
}

// The command `text` starts with: "stalesgd export" for `build/stalesgd export ...`, the
// script for `tools/export_model.py ...`; empty when it starts with neither.
std::string command_of(const std::string& text) {
  static const std::regex cli(R"(^(?:build/)?stalesgd ([a-z]+)(?: ([a-z]+))?)");
  static const std::regex script(R"(^(tools/[a-z_]+\.py)\b)");
  std::smatch m;
  if (std::regex_search(text, m, cli)) {
    // `data fetch` and `data info` are commands of their own.
    if (m[1] == "data" && m[2].matched) return "stalesgd data " + m[2].str();
    return "stalesgd " + m[1].str();
  }
  if (std::regex_search(text, m, script)) return m[1].str();
  return "";
}

// What the command accepts: its --help's flags, or for a script its add_argument("--...")s.
const std::set<std::string>& accepted(const std::string& command) {
  static std::map<std::string, std::set<std::string>> known;
  if (auto it = known.find(command); it != known.end()) return it->second;
  std::set<std::string> flags;
  if (command.rfind("tools/", 0) == 0) {
    static const std::regex argument(R"re(add_argument\(\s*"(--[a-z][a-z0-9-]*)")re");
    const std::string source = read_source(command);
    for (std::sregex_iterator it(source.begin(), source.end(), argument), end; it != end; ++it) {
      flags.insert((*it)[1].str());
    }
  } else {
    std::vector<std::string> args;
    std::istringstream words(command.substr(std::string("stalesgd ").size()));
    for (std::string w; words >> w;) args.push_back(w);
    args.push_back("--help");
    const auto r = run_cli(args);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    flags = flags_in(r.output);
  }
  INFO(command);
  REQUIRE(!flags.empty());
  return known[command] = flags;
}

struct Use {
  int line;
  std::string command, flag;
};

// Every --flag of docs/models.md with the command it is given to. A paragraph (a table row is
// one) gives its flags to `stalesgd train` until a code span names another command; a shell
// line in a code block gives its own, continuation lines included.
std::vector<Use> uses(const std::string& doc) {
  std::vector<Use> out;
  std::istringstream in(doc);
  std::string line, fence, shell_command;
  std::string context = "stalesgd train";
  int number = 0;
  bool continued = false;
  static const std::regex span("`([^`]+)`");
  for (; std::getline(in, line); ++number) {
    if (line.rfind("```", 0) == 0) {
      fence = fence.empty() ? (line.size() > 3 ? line.substr(3) : "text") : "";
      continued = false;
      continue;
    }
    if (!fence.empty()) {
      if (fence != "sh" && fence != "bash") continue;
      if (!continued) shell_command = command_of(line);
      continued = !line.empty() && line.back() == '\\';
      if (shell_command.empty()) continue;
      for (const auto& f : flags_in(line.substr(0, line.find('#')))) {
        out.push_back({number + 1, shell_command, f});
      }
      continue;
    }
    if (line.empty() || line.front() == '|') context = "stalesgd train";
    for (std::sregex_iterator it(line.begin(), line.end(), span), end; it != end; ++it) {
      const std::string text = (*it)[1].str();
      if (const std::string c = command_of(text); !c.empty()) context = c;
      for (const auto& f : flags_in(text)) out.push_back({number + 1, context, f});
    }
  }
  return out;
}

}  // namespace

TEST_CASE("docs/models.md: every --flag it gives a command is in that command's --help",
          "[model][docs]") {
  const auto all = uses(read_source("docs/models.md"));
  REQUIRE(all.size() > 50);  // the doc's flags were found
  std::set<std::string> commands;
  for (const auto& u : all) {
    commands.insert(u.command);
    INFO("docs/models.md:" << u.line << ": " << u.command << " " << u.flag);
    CHECK(accepted(u.command).count(u.flag) == 1);
  }
  // The doc's three commands: what it trains with, the exporter, and the way back to PyTorch.
  CHECK(commands.count("stalesgd train") == 1);
  CHECK(commands.count("stalesgd export") == 1);
  CHECK(commands.count("tools/export_model.py") == 1);
}
