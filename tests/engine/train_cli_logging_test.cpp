// `stalesgd train` as a long run is lived with: progress off a terminal, -q, run.log, and the
// provenance and resolved config in summary.json (docs/cli.md, docs/outputs.md).
#include <fstream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/engine_test_util.hpp"
#include "stalesgd/version.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;

namespace {

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The lines of `text` that contain `what`.
std::vector<std::string> lines_with(const std::string& text, const std::string& what) {
  std::vector<std::string> found;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (l.find(what) != std::string::npos) found.push_back(l);
  }
  return found;
}
}  // namespace

TEST_CASE("train off a terminal: progress lines on stderr and in run.log while it runs",
          "[cli][logging]") {
  TempDir dir;
  const auto out = dir / "run";
  const auto r = run_shell(kCli +
                           " train --model softmax --rule async --workers 2 --delay exp:mean=5ms "
                           "--time 3s --progress-every 1s --out " +
                           out.string() + " 2>" + (dir / "stderr.txt").string());
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("final test error"));
  const auto err = lines_with(read_text(dir / "stderr.txt"), "progress");
  REQUIRE(err.size() >= 2);  // at 1 s and 2 s at least
  CHECK(std::regex_search(err.front(),
                          std::regex(R"(info: progress \d+%  t [\d.]+ s  iteration \d+)")));
  // run.log: the command, the same progress lines, and the end; the progress came first.
  const std::string log = read_text(out / "run.log");
  const auto start = lines_with(log, " info start: ");
  const auto progress = lines_with(log, " info progress ");
  const auto end = lines_with(log, " info end: time after ");
  REQUIRE(start.size() == 1);
  CHECK_THAT(start.front(), Contains("train --model softmax --rule async"));
  REQUIRE(progress.size() >= 2);
  REQUIRE(end.size() == 1);
  CHECK(progress.back().substr(0, 24) < end.front().substr(0, 24));  // ISO times sort
  CHECK(lines_with(log, " debug snapshot at ").size() >= 2);
}

TEST_CASE("train -q prints only the result and -q, -v, --log-level exclude each other",
          "[cli][logging]") {
  TempDir dir;
  const auto r = run_shell(kCli +
                           " train -q --model softmax --rule async --workers 2 --clock virtual "
                           "--delay exp:mean=5ms --time 2s --progress-every 0.1s --out " +
                           (dir / "run").string() + " 2>" + (dir / "stderr.txt").string());
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("final test error"));
  CHECK(read_text(dir / "stderr.txt").empty());
  CHECK(std::filesystem::exists(dir / "run" / "run.log"));

  const auto both = run_shell(kCli + " train -q -v --iterations 5");
  CHECK(both.exit_code == 2);
  CHECK(both.output == "stalesgd: error: -q, -v and --log-level exclude each other; give one\n");
  const auto bad = run_shell(kCli + " race --config x.toml --log-level loud");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.output, Contains("--log-level 'loud' is not trace, debug, info"));
}

TEST_CASE("summary.json: provenance and the config as resolved", "[cli][logging]") {
  TempDir dir;
  const auto out = dir / "run";
  const auto r = run_shell(kCli +
                           " train --no-progress --model mlp --rule k-async --k 2 --workers 4 "
                           "--clock virtual --delay exp:mean=5ms --time 0.5s --eval-samples 500 "
                           "--out " +
                           out.string());
  REQUIRE(r.exit_code == 0);
  const auto s = nlohmann::json::parse(read_text(out / "summary.json"));
  const auto& c = s["config"];
  CHECK(c["hidden"] == nlohmann::json::array({128}));  // the mlp's default layers
  CHECK(c["k"] == 2);
  CHECK(c["iterations"].is_null());  // no iteration limit
  CHECK(c["time"] == 0.5);
  CHECK(c["eval_samples"] == 500);
  CHECK(c["eval_train_samples"] == 10000);
  CHECK(c["data_dir"] == "data");
  const auto& p = s["provenance"];
  CHECK_THAT(p["command_line"].get<std::string>(),
             Contains("train --no-progress --model mlp --rule k-async --k 2"));
  const std::regex iso(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");
  CHECK(std::regex_match(p["started_at"].get<std::string>(), iso));
  CHECK(std::regex_match(p["ended_at"].get<std::string>(), iso));
  CHECK(p["started_at"].get<std::string>() <= p["ended_at"].get<std::string>());
  CHECK(p["stalesgd"]["version"] == std::string(version()));
  CHECK(p["stalesgd"]["commit"] == std::string(git_commit()));
  CHECK(p["stalesgd"]["commit"].get<std::string>().size() >= 7);
  CHECK(p["host"]["cores"].get<int>() >= 1);
  CHECK_FALSE(p["host"]["name"].get<std::string>().empty());
  // The build and the libraries (this suite's build: tools/build.sh, -march=native), and the
  // data as read: the digest a checkpoint checks.
  CHECK(p["build"]["type"] == "Release");
  CHECK(p["build"]["march"] == "native");
  CHECK_THAT(p["build"]["flags"].get<std::string>(), Contains("-O"));
  CHECK_FALSE(p["build"]["compiler"].get<std::string>().empty());
  CHECK(p["build"]["libraries"]["Eigen"].get<std::string>().starts_with("3."));
  for (const char* lib : {"oneTBB", "spdlog", "fmt", "nlohmann-json", "toml++", "zlib"}) {
    INFO(lib);
    CHECK_FALSE(p["build"]["libraries"][lib].get<std::string>().empty());
  }
  CHECK(p["data"]["dataset"] == "mnist");
  CHECK(p["data"]["crc32"] == mnist().digest);
  CHECK_THAT(read_text(out / "run.log"), Contains("build: Release, ") && Contains("Eigen 3."));
}
