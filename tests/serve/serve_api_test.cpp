// ServeApi (src/serve/serve_api.hpp) in process, over race folders written by hand: statuses,
// seed groups, progress, half rows, incremental series, the Host check, the files endpoint and
// the page's files. serve_cli_test.cpp drives the same routes over HTTP on a real race.
#include "serve/serve_api.hpp"

#include <unistd.h>

#include <fstream>

#include <catch2/catch.hpp>

#include "support/fixtures.hpp"

using namespace stalesgd::serve;
using Catch::Matchers::Contains;
using stalesgd::test::TempDir;
namespace fs = std::filesystem;

namespace {

void append(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::app | std::ios::binary) << text;
}

const char* kUpdatesHeader =
    "iteration,wall_s,n_grads,mean_staleness,max_staleness,lr,minibatch_loss\n";
const char* kEvalsHeader = "wall_s,iteration,train_loss,test_loss,test_error,train_objective\n";

// A race of three runs: "a (seed 1)" finished, "a (seed 2)" half-way (its last row cut), "b"
// not started.
fs::path write_race(const TempDir& dir) {
  const fs::path race = dir / "race";
  // The race runs: this process holds its folder (FolderLock writes the holder's pid).
  append(race / ".stalesgd.lock", std::to_string(::getpid()) + "\n");
  append(race / "runs.csv",
         "label,slug,rule,k,seed,time,iterations,target_error,workers,delay,hidden\n"
         "a (seed 1),a-seed-1,async,1,1,10s,0,0.5,4,exp:mean=10ms,\n"
         "a (seed 2),a-seed-2,async,1,2,10s,0,0.5,4,exp:mean=10ms,\n"
         "b,b,sync,4,1,10s,0,0.5,4,exp:mean=10ms,\n");
  for (const char* run : {"a-seed-1", "a-seed-2"}) {
    append(race / run / "updates.csv", std::string(kUpdatesHeader) +
                                           "1,1.0,1,0,0,0.05,2.3\n"
                                           "2,2.0,1,2,2,0.05,2.2\n"
                                           "3,4.0,2,1,3,0.05,2.1\n");
    append(race / run / "evals.csv", std::string(kEvalsHeader) +
                                         "0,0,2.4,2.4,0.9,2.4\n"
                                         "2.5,2,1.0,1.1,0.4,1.0\n");
    append(race / run / "gradients.csv",
           "iteration,worker,computed_on_version,staleness,duration_s\n"
           "1,0,0,0,1\n2,1,0,1,1\n3,0,1,1,1\n3,1,0,2,1\n");
  }
  append(race / "a-seed-1" / "summary.json",
         R"({"status": "complete", "stop_reason": "time", "iterations": 3, "wall_s": 10.0,
             "seconds_per_iteration": 1.3333, "theory": {"seconds_per_iteration": 1.25,
             "method": "closed form", "formula": "1/mu"}, "gradients": {"started": 8,
             "cancelled": 2}, "config": {"rule": "async", "seed": 1, "time": 10.0}})");
  append(race / "a-seed-2" / "updates.csv", "4,5.");  // being written
  return race;
}

ServeApi make_api(const fs::path& root, const fs::path& vendor = {}) {
  return ServeApi({fs::canonical(root), fs::path(STALESGD_SOURCE_DIR) / "web" / "serve", vendor});
}

HttpReply get(ServeApi& api, const std::string& path,
              std::map<std::string, std::string> query = {}) {
  return api.handle({path, std::move(query), "127.0.0.1:6006"});
}

nlohmann::json get_json(ServeApi& api, const std::string& path,
                        std::map<std::string, std::string> query = {}) {
  const auto r = get(api, path, std::move(query));
  INFO(path << ": " << r.body);
  REQUIRE(r.status == 200);
  return nlohmann::json::parse(r.body);
}

}  // namespace

TEST_CASE("/api/runs lists a race's runs with status, group, progress and figures", "[serve]") {
  TempDir dir;
  const fs::path race = write_race(dir);
  auto api = make_api(race);
  REQUIRE(api.rescan().value() == 3);
  const auto j = get_json(api, "/api/runs");
  CHECK(j["kind"] == "race");
  REQUIRE(j["runs"].size() == 3);
  const auto& done = j["runs"][0];
  const auto& going = j["runs"][1];
  const auto& pending = j["runs"][2];
  CHECK(done["id"] == "a-seed-1");
  CHECK(done["status"] == "complete");
  CHECK(done["stop_reason"] == "time");
  CHECK(done["predicted"]["seconds_per_iteration"] == 1.25);
  CHECK(done["cancelled_fraction"] == 0.25);
  CHECK(done["progress"] == 1.0);
  CHECK(going["status"] == "running");
  CHECK(going["rows"]["updates"] == 3);  // the half row is not counted
  CHECK(going["iterations"] == 3.0);
  CHECK(going["wall_s"] == 4.0);
  CHECK(going["progress"] == 0.4);  // 4 s of the 10 s budget (runs.csv)
  CHECK(going["test_error"] == 0.4);
  CHECK(going["time_to_target_s"] == 2.5);  // first snapshot at or under 0.5
  // Staleness over gradients: (0*1 + 2*1 + 1*2) / 4; the p95 from gradients.csv.
  CHECK(going["staleness"]["mean"] == 1.0);
  CHECK(going["staleness"]["p95"] == 2.0);
  CHECK(going["staleness"]["max"] == 3.0);
  CHECK(going["seed"] == 2.0);
  // No summary.json yet: the theory for the options runs.csv gives (async: E[X] / P).
  CHECK(going["predicted"]["source"] == "options");
  CHECK(going["predicted"]["method"] == "closed form");
  CHECK(going["predicted"]["seconds_per_iteration"].get<double>() == Approx(0.010 / 4));
  CHECK(done["predicted"]["source"] == "summary.json");
  // The race that names it runs (its folder's lock is this process's): still to come.
  CHECK(pending["status"] == "pending");
  REQUIRE(j["groups"].size() == 2);
  CHECK(j["groups"][0]["name"] == "a");
  CHECK(j["groups"][0]["runs"] == nlohmann::json{"a-seed-1", "a-seed-2"});
  // The process that locked the folder is gone: the run stopped without a summary.
  append(race / "a-seed-2" / ".stalesgd.lock", "4194303\n");
  const auto stopped = get_json(api, "/api/runs")["runs"][1];
  CHECK(stopped["status"] == "stopped");
  // Cut short: its bar shows the share of the budget it got through, not a full one.
  CHECK(stopped["progress"] == 0.4);
  CHECK(stopped["started"] == true);
  CHECK(done["started"] == true);
  CHECK(pending["started"] == false);
  // The race is over (the process that locked its folder is gone) and the run has no folder:
  // it never will, or it was deleted.
  fs::remove(race / ".stalesgd.lock");
  append(race / ".stalesgd.lock", "4194303\n");
  const auto missing = get_json(api, "/api/runs")["runs"][2];
  CHECK(missing["status"] == "missing");
  CHECK(missing["progress"] == 0.0);
  CHECK(missing["message"].get<std::string>().find("the race stopped before it, or the folder "
                                                   "was deleted") != std::string::npos);
}

TEST_CASE("/api/runs: a run that ended before its first update shows no progress", "[serve]") {
  TempDir dir;
  // Killed before its first update: the summary.json of its start, an initial snapshot, and a
  // lock whose process is gone.
  const fs::path killed = dir.path() / "killed";
  fs::create_directories(killed);
  append(killed / "summary.json", R"({"status": "running", "config": {"time": 10}})");
  append(killed / "evals.csv", "wall_s,iteration,test_error,test_loss\n0,0,0.9,2.3\n");
  append(killed / ".stalesgd.lock", "4194303\n");
  // Refused by its data after it started its folder: summary.json says failed, 0 iterations.
  const fs::path refused = dir.path() / "refused";
  fs::create_directories(refused);
  append(refused / "summary.json",
         R"({"status": "failed", "stop_reason": "failed", "iterations": 0, "error": "bad data"})");
  auto api = make_api(dir.path());
  REQUIRE(api.rescan().value() == 2);
  const auto runs = get_json(api, "/api/runs")["runs"];
  REQUIRE(runs.size() == 2);
  CHECK(runs[0]["id"] == "killed");
  CHECK(runs[0]["status"] == "stopped");
  CHECK(runs[0]["started"] == false);
  CHECK(runs[0]["progress"] == 0.0);
  CHECK(runs[1]["id"] == "refused");
  CHECK(runs[1]["status"] == "failed");
  CHECK(runs[1]["started"] == false);
  CHECK(runs[1]["progress"] == 0.0);
  CHECK(runs[1]["message"] == "bad data");
}

TEST_CASE("/api/run/<id>/series sends only rows the page has not seen", "[serve]") {
  TempDir dir;
  const fs::path race = write_race(dir);
  auto api = make_api(race);
  const auto first = get_json(api, "/api/run/a-seed-2/series");
  CHECK(first["updates"]["iteration"] == nlohmann::json{1.0, 2.0, 3.0});
  CHECK(first["updates"]["wall_s"] == nlohmann::json{1.0, 2.0, 4.0});
  CHECK(first["evals"]["test_error"] == nlohmann::json{0.9, 0.4});
  CHECK(first["staleness_histogram"] == nlohmann::json{1, 2, 1});
  CHECK(first["more"] == false);
  const std::string cursor = first["cursor"];
  CHECK(get_json(api, "/api/run/a-seed-2/series", {{"since", cursor}})["updates"]["iteration"]
            .empty());
  // The cut row is finished and one more arrives.
  append(race / "a-seed-2" / "updates.csv", "0,1,1,4,0.05,2.0\n5,6.0,1,0,0,0.05,1.9\n");
  const auto next = get_json(api, "/api/run/a-seed-2/series", {{"since", cursor}});
  CHECK(next["updates"]["first"] == 3);
  CHECK(next["updates"]["iteration"] == nlohmann::json{4.0, 5.0});
  CHECK(next["updates"]["wall_s"] == nlohmann::json{5.0, 6.0});
  CHECK(next["evals"]["test_error"].empty());
  // At most `limit` rows a reply; "more" says to ask again.
  const auto limited = get_json(api, "/api/run/a-seed-2/series", {{"limit", "2"}});
  CHECK(limited["updates"]["iteration"].size() == 2);
  CHECK(limited["more"] == true);
  CHECK(get(api, "/api/run/nope/series").status == 404);
  CHECK(get(api, "/api/run/b/series").status == 200);  // pending: no rows yet
}

TEST_CASE("serve refuses paths out of the folder and foreign Host headers", "[serve]") {
  TempDir dir;
  const fs::path race = write_race(dir);
  append(dir / "secret.txt", "secret\n");
  fs::create_symlink(dir / "secret.txt", race / "a-seed-1" / "link.csv");
  auto api = make_api(race, dir / "no-vendor");
  // A file is handed over open, for the transport to stream: its bytes are the file's.
  const auto evals = get(api, "/files/a-seed-1/evals.csv");
  CHECK(evals.status == 200);
  REQUIRE(evals.file);
  std::string body(evals.file->size(), '\0');
  CHECK(evals.file->read_at(0, body.data(), body.size()) == static_cast<std::int64_t>(body.size()));
  CHECK(body == stalesgd::test::slurp(race / "a-seed-1" / "evals.csv"));
  CHECK(get(api, "/files/../secret.txt").status == 403);
  CHECK(get(api, "/files//etc/passwd").status == 403);
  CHECK(get(api, "/files/a-seed-1/link.csv").status == 403);
  CHECK(get(api, "/files/a-seed-1/none.csv").status == 404);
  CHECK(get(api, "/../secret.txt").status == 404);  // static files come from a fixed list
  api.set_allowed_hosts({"127.0.0.1:6006"});
  CHECK(get(api, "/api/runs").status == 200);
  CHECK(api.handle({"/api/runs", {}, "attacker.example:6006"}).status == 403);
  // The page comes from the source tree; the chart library's absence is one line.
  const auto page = get(api, "/");
  CHECK(page.status == 200);
  CHECK_THAT(page.body, Contains("/app.js"));
  const auto chart = get(api, "/vendor/uPlot.iife.min.js");
  CHECK(chart.status == 404);
  CHECK_THAT(chart.body, Contains("tools/setup.sh serve"));
  CHECK(get_json(api, "/api/runs")["chart_library"] == false);
}

TEST_CASE("serve finds runs in a run folder and in a folder of races", "[serve]") {
  TempDir dir;
  write_race(dir);
  append(dir / "single" / "evals.csv", std::string(kEvalsHeader) + "0,0,2.4,2.4,0.9,2.4\n");
  // A train --out folder while it runs: the summary.json written at its start holds its options.
  append(dir / "single" / "summary.json",
         R"({"status": "running", "config": {"rule": "k-async", "workers": 4, "k": 2, )"
         R"("iterations": 100, "delay": "exp:mean=10ms"}})");
  append(dir / "single" / "updates.csv", std::string(kUpdatesHeader) + "25,1.0,2,1,1,0.05,2\n");
  auto one = make_api(dir / "single");
  const auto run = get_json(one, "/api/runs");
  CHECK(run["kind"] == "run");
  REQUIRE(run["runs"].size() == 1);
  CHECK(run["runs"][0]["rule"] == "k-async");
  CHECK(run["runs"][0]["delay"] == "exp:mean=10ms");
  CHECK(run["runs"][0]["progress"] == 0.25);  // iteration 25 of --iterations 100
  CHECK(run["runs"][0]["predicted"]["source"] == "options");
  auto all = make_api(dir.path());
  const auto folder = get_json(all, "/api/runs");
  CHECK(folder["kind"] == "folder");
  REQUIRE(folder["runs"].size() == 4);
  CHECK(folder["runs"][0]["id"] == "race/a-seed-1");
  CHECK(folder["runs"][0]["group"] == "race/a");
  CHECK(folder["runs"][3]["id"] == "single");
  CHECK(get(all, "/api/run/race/a-seed-1/series").status == 200);
  TempDir empty;
  CHECK(make_api(empty.path()).rescan().value() == 0);
  ServeApi missing({dir / "missing", {}, {}});
  const auto gone = missing.rescan();
  REQUIRE_FALSE(gone.ok());
  CHECK_THAT(gone.error().message, Contains("does not exist"));
}

TEST_CASE("a label that is not UTF-8 does not break /api/runs", "[serve]") {
  TempDir dir;
  append(dir / "race" / "runs.csv", "label,slug\nbad \xff label,bad\n");
  append(dir / "race" / "bad" / "evals.csv", std::string(kEvalsHeader) + "0,0,2.4,2.4,0.9,2.4\n");
  auto api = make_api(dir / "race");
  const auto j = get_json(api, "/api/runs");
  REQUIRE(j["runs"].size() == 1);
  CHECK(j["runs"][0]["label"] == "bad \xEF\xBF\xBD label");  // U+FFFD
}
