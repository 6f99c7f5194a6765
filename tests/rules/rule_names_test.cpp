// A rule is its file in src/rules/ (docs/architecture.md, "How to add"): no other code spells a
// rule's name, so that nothing outside src/rules/ decides by name what a rule does (what the rest
// of a run needs of a rule, its registration declares).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "stalesgd/rules/rule_registry.hpp"

using namespace stalesgd;
namespace fs = std::filesystem;

TEST_CASE("rule names: no code outside src/rules/ spells a registered rule's name",
          "[rules][registry]") {
  const fs::path root = STALESGD_SOURCE_DIR;
  std::vector<std::string> quoted;
  for (const RuleInfo* info : registered_rules()) quoted.push_back("\"" + info->name + "\"");
  REQUIRE(quoted.size() >= 14);
  std::size_t files = 0;
  std::vector<std::string> found;
  for (const char* dir : {"src", "include", "tools/cli"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      const fs::path& p = entry.path();
      if (!entry.is_regular_file() || (p.extension() != ".cpp" && p.extension() != ".hpp")) {
        continue;
      }
      const std::string relative = fs::relative(p, root).string();
      if (relative.starts_with("src/rules/") || relative.starts_with("include/stalesgd/rules/")) {
        continue;
      }
      ++files;
      std::ifstream in(p);
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        for (const std::string& name : quoted) {
          if (line.find(name) != std::string::npos) {
            found.push_back(relative + ":" + std::to_string(n) + ": " + line);
          }
        }
      }
    }
  }
  CHECK(files > 100);
  for (const auto& f : found) UNSCOPED_INFO(f);
  CHECK(found.empty());
}

// What an engine needs of a rule beyond its decisions reaches it through the RoundProtocol and
// the ServerCore (docs/architecture.md, "The path of one gradient"): no engine, simulator or
// Monte Carlo calls a rule's own hooks, so a new rule family's hook never leaks past them.
TEST_CASE("rule hooks: engines, the simulator and the theory ask the protocol, not the rule",
          "[rules][registry]") {
  const fs::path root = STALESGD_SOURCE_DIR;
  // A hook's call, or any call on a Rule object (`rule().x`, `rule_->x`, `rule_.x`).
  const std::regex hook(
      R"((\b(may_start|cuts_at|cuts_in_flight|averages_per_worker|on_retire|runs_with)\()"
      R"(|\brule\(\)\.|\brule_(->|\.)))");
  std::size_t files = 0;
  std::vector<std::string> found;
  for (const char* dir : {"src/engine", "src/sim", "src/theory"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      const fs::path& p = entry.path();
      if (!entry.is_regular_file() || (p.extension() != ".cpp" && p.extension() != ".hpp")) {
        continue;
      }
      const std::string relative = fs::relative(p, root).string();
      // The server core is where the rule's arithmetic lives (the round's sum, AdaSync's K).
      if (relative.starts_with("src/engine/server_core")) continue;
      ++files;
      std::ifstream in(p);
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        const auto comment = line.find("//");
        const std::string code = line.substr(0, comment);
        if (std::regex_search(code, hook)) {
          found.push_back(relative + ":" + std::to_string(n) + ": " + line);
        }
      }
    }
  }
  CHECK(files > 40);
  for (const auto& f : found) UNSCOPED_INFO(f);
  CHECK(found.empty());
}
