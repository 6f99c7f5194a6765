// `stalesgd serve` as a user runs it: over a real virtual-clock race made with the CLI, its
// JSON endpoints over HTTP must hold the values of the race's CSVs and summary.json; paths out
// of the folder are refused; bad input is one line and the exit status of docs/cli.md; SIGINT
// and SIGTERM stop it with 130 and 143.
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include "serve/csv_journal.hpp"
#include "serve/serve_process.hpp"
#include "support/csv_column.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

nlohmann::json get_json(const std::string& url) {
  const auto r = http_get(url);
  INFO(url << ": " << r.status << " " << r.body);
  REQUIRE(r.status == 200);
  return nlohmann::json::parse(r.body);
}

// One line on stderr, nothing on stdout.
void check_one_line(const CliResult& r, int status, const std::string& says) {
  INFO(r.output);
  CHECK(r.exit_code == status);
  CHECK(line_count(r.output) == 1);
  CHECK_THAT(r.output, Contains("stalesgd: error: ") && Contains(says));
}

// A run folder with one snapshot, written by hand: enough for serve to start.
fs::path write_run(const TempDir& dir) {
  const fs::path run = dir / "run";
  fs::create_directories(run);
  std::ofstream(run / "evals.csv") << "wall_s,iteration,train_loss,test_loss,test_error\n"
                                      "0,0,2.3,2.3,0.9\n";
  return run;
}

}  // namespace

TEST_CASE("serve's endpoints hold a race's CSV values, over HTTP", "[serve]") {
  require_httplib();
  TempDir dir;
  std::ofstream(dir / "race.toml") << "model = \"softmax\"\nworkers = 4\n"
                                      "delay = \"exp:mean=10ms\"\nclock = \"virtual\"\n"
                                      "time = \"0.5s\"\neval_every = \"0.1s\"\n"
                                      "eval_samples = 1000\nseeds = [1, 2]\n"
                                      "[[run]]\nlabel = \"async\"\nrule = \"async\"\n"
                                      "[[run]]\nlabel = \"k-sync\"\nrule = \"k-sync\"\nk = 2\n";
  const fs::path race = dir / "race";
  const auto made =
      run_cli({"race", "--config", (dir / "race.toml").string(), "--out", race.string(), "--jobs",
               "2", "--no-progress", "-q", "--data-dir", repo_data_dir().string()});
  INFO(made.output);
  REQUIRE(made.exit_code == 0);

  ServeProcess serve(race.string() + " --port 0");
  const std::string url = serve.url();
  INFO(serve.out() << serve.err());
  REQUIRE(url.starts_with("http://127.0.0.1:"));
  CHECK_THAT(serve.out(), Contains("4 runs"));

  const auto runs = get_json(url + "api/runs");
  CHECK(runs["kind"] == "race");
  REQUIRE(runs["runs"].size() == 4);
  const auto results = csv_column(race / "results.csv", "iterations");
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& run = runs["runs"][i];
    const std::string id = run["id"];
    INFO(id);
    const fs::path folder = race / id;
    std::ifstream summary_file(folder / "summary.json");
    const auto summary = nlohmann::json::parse(summary_file);
    CHECK(run["status"] == "complete");
    CHECK(run["stop_reason"] == summary["stop_reason"]);
    CHECK(run["iterations"] == summary["iterations"]);
    CHECK(run["iterations"].get<double>() == results.at(i));
    CHECK(run["predicted"]["seconds_per_iteration"] == summary["theory"]["seconds_per_iteration"]);
    CHECK(run["staleness"]["mean"] == summary["staleness"]["mean"]);
    CHECK(run["test_error"].get<double>() == csv_column(folder / "evals.csv", "test_error").back());
    CHECK(run["rows"]["updates"] == csv_column(folder / "updates.csv", "iteration").size());
    CHECK(run["rows"]["gradients"] == csv_column(folder / "gradients.csv", "staleness").size());
    CHECK(run["progress"] == 1.0);
  }
  REQUIRE(runs["groups"].size() == 2);
  CHECK(runs["groups"][0]["name"] == "async");
  CHECK(runs["groups"][0]["runs"] == nlohmann::json{"async-seed-1", "async-seed-2"});

  // The series: every snapshot and update of the run, then nothing new after its cursor.
  const auto series = get_json(url + "api/run/k-sync-seed-1/series");
  const fs::path ksync = race / "k-sync-seed-1";
  CHECK(series["evals"]["test_error"].get<std::vector<double>>() ==
        csv_column(ksync / "evals.csv", "test_error"));
  CHECK(series["updates"]["wall_s"].get<std::vector<double>>() ==
        csv_column(ksync / "updates.csv", "wall_s"));
  std::uint64_t histogram = 0;
  for (const auto& n : series["staleness_histogram"]) histogram += n.get<std::uint64_t>();
  CHECK(histogram == csv_column(ksync / "gradients.csv", "staleness").size());
  const std::string cursor = series["cursor"];
  const auto again = get_json(url + "api/run/k-sync-seed-1/series?since=" + cursor);
  CHECK(again["updates"]["wall_s"].empty());
  CHECK(again["evals"]["wall_s"].empty());

  // Files of the folder, and nothing outside it.
  const auto evals = http_get(url + "files/async-seed-1/evals.csv");
  CHECK(evals.status == 200);
  CHECK(evals.body == slurp(race / "async-seed-1" / "evals.csv"));
  CHECK(http_get(url + "files/../race.toml").status == 403);
  CHECK(http_get(url + "files/%2e%2e/race.toml").status == 403);
  CHECK(http_get(url + "files/async-seed-1/../../race.toml").status == 403);
  CHECK(http_get(url + "files/" + (dir / "race.toml").string()).status == 403);
  CHECK(http_get(url + "../race.toml").status == 404);
  CHECK(http_get(url + "api/run/../series").status == 404);
  CHECK(http_get(url + "api/runs", "rebound.example:80").status == 403);
  const auto page = http_get(url);
  CHECK(page.status == 200);
  CHECK_THAT(page.body, Contains("<script src=\"/app.js\">"));

  CHECK(serve.stop("INT") == 130);
  CHECK(serve.err().find("error") == std::string::npos);
}

TEST_CASE("serve: bad input is one line and its exit status", "[serve]") {
  require_httplib();
  TempDir dir;
  check_one_line(run_cli({"serve"}), 2, "give the folder to show");
  check_one_line(run_cli({"serve", (dir / "nowhere").string()}), 1, "does not exist");
  fs::create_directories(dir / "empty");
  check_one_line(run_cli({"serve", (dir / "empty").string()}), 1, "holds no runs");
  const fs::path run = write_run(dir);
  check_one_line(run_cli({"serve", run.string(), "--port", "70000"}), 2, "is not a TCP port");
  check_one_line(run_cli({"serve", run.string(), "--port", "x"}), 2, "stalesgd serve --help");
  check_one_line(run_cli({"serve", run.string(), "--bogus"}), 2, "bogus");

  // A port in use, held by another serve; which then stops on SIGTERM.
  ServeProcess first(run.string() + " --port 0");
  const std::string url = first.url();
  INFO(first.out() << first.err());
  REQUIRE(!url.empty());
  const std::string port = url.substr(url.rfind(':') + 1, url.size() - url.rfind(':') - 2);
  check_one_line(run_cli({"serve", run.string(), "--port", port}), 1, "in use");
  CHECK(first.stop("TERM") == 143);

  // Opened wider than loopback: one loud line; without the chart library: one line saying how.
  ServeProcess wide(run.string() + " --port 0 --host 0.0.0.0",
                    "STALESGD_WEB_VENDOR_DIR=" + (dir / "empty").string());
  REQUIRE(!wide.url().empty());
  CHECK(wide.stop("INT") == 130);
  INFO(wide.err());
  CHECK(line_count(wide.err()) == 2);
  CHECK_THAT(wide.err(), Contains("WARNING: --host 0.0.0.0 makes this page reachable from the "
                                  "network"));
  CHECK_THAT(wide.err(), Contains("run tools/setup.sh serve"));
}

TEST_CASE("serve: SIGHUP and SIGUSR1 stop it as SIGTERM does, exit 128 + the signal", "[serve]") {
  require_httplib();
  TempDir dir;
  const fs::path run = write_run(dir);
  for (const auto& [signal, status] : {std::pair{"HUP", 129}, std::pair{"USR1", 138}}) {
    INFO(signal);
    ServeProcess serve(run.string() + " --port 0");
    REQUIRE(!serve.url().empty());
    CHECK(serve.stop(signal) == status);
    INFO(serve.err());
    CHECK(serve.err().find("error") == std::string::npos);
  }
}
