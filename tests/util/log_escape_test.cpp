// run.log holds one line per message, whatever the user's paths, labels and specs hold: control
// characters are written as C escapes, and the command line in $'...' quoting that bash reads
// back to the same words.
#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include <catch2/catch.hpp>

#include "output/provenance.hpp"
#include "support/fixtures.hpp"
#include "util/log_escape.hpp"
#include "util/logging.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

// A line that, written raw after a newline, would pass for one of run.log's own.
const std::string kForged = "2026-01-01T00:00:00.000Z info end: iterations after 9 iterations";

// Every line of DIR/run.log is one of its own (a UTC time, a level, the message); the messages.
std::vector<std::string> run_log_messages(const fs::path& dir) {
  const std::regex line(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \w+ (.*)$)");
  std::istringstream in(slurp(dir / "run.log"));
  std::vector<std::string> messages;
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    INFO(l);
    REQUIRE(std::regex_match(l, m, line));
    messages.push_back(m[1].str());
  }
  return messages;
}

// How many of `lines` start with `text`.
std::size_t count_starting(const std::vector<std::string>& lines, const std::string& text) {
  return static_cast<std::size_t>(std::count_if(
      lines.begin(), lines.end(), [&](const auto& l) { return l.rfind(text, 0) == 0; }));
}

}  // namespace

TEST_CASE("log escape: control characters become C escapes and the rest stays as it is",
          "[logging]") {
  CHECK(logging::escape_controls("plain / path, 'quoted' \\n é") == "plain / path, 'quoted' \\n é");
  CHECK(logging::escape_controls(std::string("a\nb\rc\td\x01\x1b[31m\x7f", 14)) ==
        "a\\nb\\rc\\td\\x01\\x1b[31m\\x7f");
}

TEST_CASE("log escape: a message with a newline is one run.log line", "[logging]") {
  TempDir dir;
  logging::set_stderr_level(spdlog::level::off);
  {
    auto log = logging::RunLog::open(dir.path());
    REQUIRE(log);
    (*log)->record(spdlog::level::err, "cannot write /x\n" + kForged);
    (*log)->logger()->warn("label a\r\nb");
  }
  CHECK(run_log_messages(dir.path()) ==
        std::vector<std::string>{"cannot write /x\\n" + kForged, "label a\\r\\nb"});
  logging::set_stderr_level(spdlog::level::info);
}

TEST_CASE("log escape: a word with a control character is quoted $'...' and bash reads it back",
          "[logging][provenance]") {
  const std::vector<std::string> words{"stalesgd",
                                       "--out",
                                       "a\nb\x01"
                                       "c\\d'e",
                                       "--label",
                                       "tab\there",
                                       "plain"};
  const std::string line = shell_quoted(words);
  CHECK(line.find('\n') == std::string::npos);
  CHECK(line == "stalesgd --out $'a\\x0ab\\x01c\\\\d\\'e' --label $'tab\\x09here' plain");
  TempDir dir;
  std::ofstream(dir / "words.sh") << "printf '[%s]\\n' " << line.substr(line.find(' ') + 1) << "\n";
  const auto r = run_shell("bash " + (dir / "words.sh").string());
  REQUIRE(r.exit_code == 0);
  std::string expected;
  for (std::size_t i = 1; i < words.size(); ++i) expected += "[" + words[i] + "]\n";
  CHECK(r.output == expected);
}

TEST_CASE("log escape: train CLI: an --out holding a newline forges no run.log line",
          "[logging][cli]") {
  TempDir base;
  const fs::path out = base / ("run\n" + kForged);
  const auto r =
      run_cli({"train", "--model", "softmax", "--workers", "2", "--clock", "virtual", "--delay",
               "exp:mean=10ms", "--time", "0.3s", "--no-progress", "--out", out.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto messages = run_log_messages(out);
  // The one end line is the run's own; the --out is in the start line, escaped.
  CHECK(count_starting(messages, "end: ") == 1);
  REQUIRE(!messages.empty());
  CHECK_THAT(messages.front(),
             Contains("start: ") && Contains("$'") && Contains("run\\x0a" + kForged + "'"));
  // The start line's command line gives the --out back, through bash.
  const std::string command = messages.front().substr(std::string("start: ").size());
  std::ofstream(base / "words.sh") << "printf '%s\\n' " << command << "\n";
  const auto words = run_shell("bash " + (base / "words.sh").string());
  CHECK_THAT(words.output, Contains(out.string() + "\n"));
}

TEST_CASE("log escape: race CLI: a label holding a newline forges no run.log line",
          "[logging][cli][race]") {
  TempDir dir;
  std::ofstream(dir / "race.toml") << "model = \"softmax\"\nworkers = 2\nclock = \"virtual\"\n"
                                      "delay = \"exp:mean=10ms\"\ntime = \"0.3s\"\ndata_dir = \""
                                   << repo_data_dir().string() << "\"\n[[run]]\nlabel = \"one\\n"
                                   << kForged << "\"\n";
  const auto r = run_cli({"race", "--config", (dir / "race.toml").string(), "--out",
                          (dir / "out").string(), "--no-progress"});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  fs::path run;
  for (const auto& e : fs::directory_iterator(dir / "out")) {
    if (e.is_directory()) run = e.path();
  }
  REQUIRE(!run.empty());
  const auto messages = run_log_messages(run);
  CHECK(count_starting(messages, "end: ") == 1);
  CHECK(count_starting(messages, "start: run 'one\\n" + kForged + "' of: ") == 1);
}
