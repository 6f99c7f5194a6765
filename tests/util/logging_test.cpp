// Logging: level names, run.log's UTC lines, and record() writing to run.log only.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <sstream>

#include "support/fixtures.hpp"
#include "util/logging.hpp"

using namespace stalesgd;
using namespace stalesgd::test;

namespace {
std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST_CASE("log levels parse by name and refuse anything else", "[logging]") {
  CHECK(*logging::parse_level("debug") == spdlog::level::debug);
  CHECK(*logging::parse_level("warning") == spdlog::level::warn);
  CHECK(*logging::parse_level("off") == spdlog::level::off);
  const auto bad = logging::parse_level("loud");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message == "--log-level 'loud' is not trace, debug, info, warn, error or off");
}

TEST_CASE("run.log gets debug lines with UTC timestamps and record() writes to it alone",
          "[logging]") {
  TempDir dir;
  logging::set_stderr_level(spdlog::level::off);  // nothing on the test's stderr
  {
    auto log = logging::RunLog::open(dir.path());
    REQUIRE(log);
    (*log)->logger()->debug("snapshot {}", 1);
    (*log)->logger()->trace("finer than debug");
    (*log)->record(spdlog::level::err, "the error line");
  }
  const std::string text = read_text(dir / "run.log");
  const std::regex line(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (\w+) (.*)$)");
  std::istringstream lines(text);
  std::vector<std::string> seen;
  for (std::string l; std::getline(lines, l);) {
    std::smatch m;
    REQUIRE(std::regex_match(l, m, line));
    seen.push_back(m[1].str() + " " + m[2].str());
  }
  CHECK(seen == std::vector<std::string>{"debug snapshot 1", "error the error line"});
  logging::set_stderr_level(spdlog::level::info);
}

TEST_CASE("a resumed run appends to its run.log and an unwritable folder is named", "[logging]") {
  TempDir dir;
  logging::set_stderr_level(spdlog::level::off);
  for (int i = 0; i < 2; ++i) {
    auto log = logging::RunLog::open(dir.path());
    REQUIRE(log);
    (*log)->record(spdlog::level::info, "line");
  }
  CHECK(line_count(read_text(dir / "run.log")) == 2);
  write_bytes(dir / "file", {'x'});  // a folder that is a file cannot hold run.log
  const auto bad = logging::RunLog::open(dir / "file");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find((dir / "file" / "run.log").string()) != std::string::npos);
  logging::set_stderr_level(spdlog::level::info);
}
