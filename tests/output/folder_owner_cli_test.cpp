// One owner per folder, nested too, between real processes (docs/reliability.md, "two processes
// on one folder"): a live race holds its --out and the folder of the run it runs, a live train
// its --out; `train --force`, `train --resume` and `race --force` on any of them, inside them or
// around them are refused in one line naming the holder's pid and folder, exit 1, and every
// run's files stay its own. (The lock itself, in one process: folder_lock_test.cpp.)
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>

#include "support/csv_column.hpp"
#include "support/fixtures.hpp"
#include "support/sanitized.hpp"
#include "support/summary.hpp"

extern char** environ;

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

// The stalesgd binary with `args`, in the background, its output into `log`.
pid_t spawn_cli(std::vector<std::string> args, const fs::path& log) {
  args.insert(args.begin(), STALESGD_CLI);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE(rc == 0);
  return pid;
}

// Waits (a hang guard of 60 s, not a timing assertion) until `dir`'s run has started: its
// summary.json says "running", written once the folder is locked and the journal open.
void wait_running(pid_t pid, const fs::path& dir) {
  for (int i = 0; i < 3000 && summary_status(dir) != "running"; ++i) {
    int status = 0;
    REQUIRE(waitpid(pid, &status, WNOHANG) == 0);  // still alive
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(summary_status(dir) == "running");
}

// SIGTERM to `pid`, then its exit status (or -1 when a signal ended it). A hang guard kills it
// after 60 s.
int stop(pid_t pid) {
  REQUIRE(::kill(pid, SIGTERM) == 0);
  int status = 0;
  for (int i = 0; i < 3000 && waitpid(pid, &status, WNOHANG) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (::kill(pid, 0) == 0 && waitpid(pid, &status, WNOHANG) == 0) {
    ::kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    FAIL("the process did not end within 60 s of SIGTERM");
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A run folder's files are its own: updates.csv holds as many rows as summary.json's
// iterations, and run.log records one start (no other process's).
std::uint64_t check_own_files(const fs::path& dir) {
  INFO(dir);
  const auto summary = read_summary(dir);
  const auto iterations = summary.at("iterations").get<std::uint64_t>();
  CHECK(csv_column(dir / "updates.csv", "iteration").size() == iterations);
  std::istringstream log(slurp(dir / "run.log"));
  int starts = 0;
  for (std::string line; std::getline(log, line);)
    starts += line.find("start:") != std::string::npos;
  CHECK(starts == 1);
  return iterations;
}

// Every refusal: exit 1, one line, naming `pid` as the holder.
void check_refused(const CliResult& r, pid_t pid, const std::string& names) {
  CHECK(r.exit_code == 1);
  CHECK(line_count(r.output) == 1);
  CHECK_THAT(r.output, Contains("stalesgd: error: --out ") &&
                           Contains("in use by process " + std::to_string(pid) + " (its lock is") &&
                           Contains(names));
}

// The names in `dir`, not recursing.
std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

// A train that would replace whatever folder it is given (5 virtual-clock iterations).
std::vector<std::string> intruder(const fs::path& out) {
  return {"train",
          "--force",
          "--model",
          "softmax",
          "--rule",
          "async",
          "--clock",
          "virtual",
          "--iterations",
          "5",
          "--no-progress",
          "--data-dir",
          repo_data_dir().string(),
          "--out",
          out.string()};
}

}  // namespace

TEST_CASE(
    "folder owner: train --force into a live race's run folder, inside it or around it is "
    "refused naming the race, and the race's files stay its own",
    "[output][lock][cli]") {
  TempDir dir;
  const fs::path cfg = dir / "race.toml";
  // Run `b` ends by itself; run `a` (last) is live until SIGTERM stops the race.
  write_text(cfg,
             "name = \"live\"\nmodel = \"softmax\"\nworkers = 2\nrule = \"async\"\n"
             "delay = \"exp:mean=5ms\"\neval_every = \"1000s\"\neval_samples = 500\n"
             "[[run]]\nlabel = \"b\"\nclock = \"virtual\"\niterations = 50\n"
             "[[run]]\nlabel = \"a\"\nclock = \"real\"\ntime = \"600s\"\n");
  const fs::path race = dir / "race";
  const pid_t pid = spawn_cli({"race", "--config", cfg.string(), "--data-dir",
                               repo_data_dir().string(), "--no-progress", "--out", race.string()},
                              dir / "race.log");
  wait_running(pid, race / "a");
  const std::string canonical = fs::canonical(race).string();

  // The live run's folder itself: named as the race's.
  check_refused(run_cli(intruder(race / "a")), pid, race.string() + "/a is in use by");
  check_refused(run_cli({"train", "--resume", (race / "a").string(), "--no-progress"}), pid,
                race.string() + "/a is in use by");
  // A run that ended, one not yet there and a child of the live one: inside a held folder.
  check_refused(run_cli(intruder(race / "b")), pid, "is inside " + canonical + ", which");
  check_refused(run_cli(intruder(race / "c")), pid, "is inside " + canonical + ", which");
  check_refused(run_cli(intruder(race / "a" / "sub")), pid, "is inside " + canonical + "/a, which");
  // The race's folder, and the folder around it.
  check_refused(run_cli(intruder(race)), pid, race.string() + " is in use by");
  check_refused(run_cli({"race", "--config", cfg.string(), "--data-dir", repo_data_dir().string(),
                         "--no-progress", "--force", "--out", race.string()}),
                pid, race.string() + " is in use by");
  check_refused(run_cli({"race", "--config", cfg.string(), "--data-dir", repo_data_dir().string(),
                         "--no-progress", "--force", "--out", dir.path().string()}),
                pid, " holds " + canonical);
  CHECK_FALSE(fs::exists(race / "c"));
  CHECK_FALSE(fs::exists(race / "a" / "sub"));
  CHECK_FALSE(fs::exists(dir / "results.csv"));
  CHECK_FALSE(fs::exists(dir / ".stalesgd.lock"));

  CHECK(stop(pid) == 143);
  const auto iterations = csv_column(race / "results.csv", "iterations");
  REQUIRE(iterations.size() == 2);
  CHECK(check_own_files(race / "b") == 50);
  CHECK(iterations[0] == 50);
  CHECK(iterations[1] == static_cast<double>(check_own_files(race / "a")));
  CHECK(read_summary(race / "a").at("stop_reason") == "interrupted");
  CHECK(names_in(race) == std::set<std::string>{".stalesgd.lock", "a", "b", "experiment.toml",
                                                "results.csv", "runs.csv"});
}

TEST_CASE(
    "folder owner: race --force over a folder holding a live train, and train inside or "
    "around it, are refused naming the train",
    "[output][lock][cli]") {
  TempDir dir;
  const fs::path top = dir / "top";
  const fs::path live = top / "l";
  const pid_t pid =
      spawn_cli({"train", "--model", "softmax", "--rule", "async", "--workers", "2", "--delay",
                 "exp:mean=5ms", "--time", "600s", "--eval-every", "1000s", "--no-progress",
                 "--data-dir", repo_data_dir().string(), "--out", live.string()},
                dir / "train.log");
  wait_running(pid, live);
  const std::string canonical = fs::canonical(live).string();
  const fs::path cfg = dir / "race.toml";
  write_text(cfg,
             "model = \"softmax\"\nworkers = 2\nrule = \"async\"\nclock = \"virtual\"\n"
             "iterations = 5\n[[run]]\nlabel = \"l\"\n");
  const auto race = [&](const std::string& how) {
    std::vector<std::string> args{
        "race",          "--config", cfg.string(), "--data-dir", repo_data_dir().string(),
        "--no-progress", "--out",    top.string()};
    if (!how.empty()) args.push_back(how);
    return run_cli(args);
  };
  // Around it: a race (however told to treat what is there) and a train.
  for (const std::string how : {"--force", "--resume", ""}) {
    INFO("race " << how);
    check_refused(race(how), pid, top.string() + " holds " + canonical + ", which");
  }
  check_refused(run_cli(intruder(top)), pid, top.string() + " holds " + canonical + ", which");
  // The folder itself, and inside it.
  check_refused(run_cli(intruder(live)), pid, live.string() + " is in use by");
  check_refused(run_cli({"train", "--resume", live.string(), "--no-progress"}), pid,
                live.string() + " is in use by");
  check_refused(run_cli(intruder(live / "x")), pid, "is inside " + canonical + ", which");
  // Nothing written around it or inside it.
  CHECK(names_in(top) == std::set<std::string>{"l"});
  CHECK_FALSE(fs::exists(live / "x"));

  CHECK(stop(pid) == 143);
  check_own_files(live);
  CHECK(read_summary(live).at("stop_reason") == "interrupted");
  // The train gone, the folder around it is free (its run is replaced by the race's, as asked).
  const auto freed = race("--force");
  INFO(freed.output);
  CHECK(freed.exit_code == 0);
  CHECK(check_own_files(top / "l") == 5);
}

TEST_CASE(
    "folder owner, stress: a race of 8 runs while another process keeps trying train "
    "--force on one of its run folders: every try refused, every run's files its own",
    "[output][lock][cli][stress]") {
  TempDir dir;
  const fs::path cfg = dir / "eight.toml";
  // Seven virtual-clock runs, two at a time, then `h` on the real clock, live until the
  // intruder has been refused 20 times by h's own lock; then SIGTERM ends the race.
  std::string toml =
      "name = \"eight\"\nmodel = \"softmax\"\nworkers = 2\nrule = \"async\"\n"
      "delay = \"exp:mean=5ms\"\neval_every = \"1000s\"\neval_samples = 500\n";
  // Fewer iterations where the sanitizers slow compute 10-40x; the same tries and checks.
  const int iterations_each = kSanitized ? 200 : 1000;
  for (const std::string label : {"a", "b", "c", "d", "e", "f", "g"}) {
    toml += "[[run]]\nlabel = \"" + label +
            "\"\nclock = \"virtual\"\niterations = " + std::to_string(iterations_each) + "\n";
  }
  toml += "[[run]]\nlabel = \"h\"\nclock = \"real\"\ntime = \"600s\"\n";
  write_text(cfg, toml);
  const fs::path race = dir / "race";
  const fs::path target = race / "h";
  const fs::path attempts = dir / "attempts.txt";
  std::string train;
  for (const auto& a : intruder(target)) train += " '" + a + "'";
  // The loop starts once the race holds its folder (it has written experiment.toml: a train
  // before that would take h's folder first, and the race would be the one refused) and stops
  // once the race has written results.csv (its end), at 1000 tries at most.
  const auto r = run_shell(
      kCli + " race --config " + cfg.string() + " --jobs 2 --no-progress --data-dir " +
      repo_data_dir().string() + " --out " + race.string() + " >" + (dir / "race.log").string() +
      " 2>&1 & pid=$!; echo pid=$pid; for i in $(seq 3000); do [ -e " +
      (race / "experiment.toml").string() + " ] && break; sleep 0.02; done; live=0; n=0; " +
      "while [ ! -e " + (race / "results.csv").string() +
      " ] && [ $n -lt 1000 ]; do n=$((n+1)); out=$(" + kCli + train +
      " 2>&1); rc=$?; printf 'rc=%s %s\\n' \"$rc\" \"$out\" >>" + attempts.string() +
      "; case \"$out\" in *\"--out " + target.string() +
      " is in use by process $pid (\"*) live=$((live+1)); [ $live -eq 20 ] && kill -TERM $pid;; "
      "esac; done; [ -e " +
      (race / "results.csv").string() +
      " ] || kill -9 $pid; wait $pid; echo race_exit=$? tries=$n live=$live");
  INFO(r.output << slurp(dir / "race.log"));
  REQUIRE(r.output.find("race_exit=143") != std::string::npos);
  const std::string pid = r.output.substr(4, r.output.find('\n') - 4);
  const std::string canonical = fs::canonical(race).string();

  // Every try refused, naming the race: by h's own lock while h ran, by the race's around it
  // before.
  std::istringstream lines(slurp(attempts));
  int tries = 0, by_run = 0;
  for (std::string line; std::getline(lines, line); ++tries) {
    INFO(line);
    CHECK(line.starts_with("rc=1 stalesgd: error: --out " + target.string()));
    CHECK_THAT(line, Contains("in use by process " + pid + " (its lock is"));
    const bool run_lock = line.find(target.string() + " is in use by") != std::string::npos;
    by_run += run_lock;
    CHECK((run_lock || line.find(" is inside " + canonical + ", which") != std::string::npos));
  }
  CHECK(tries >= 20);
  CHECK(by_run >= 20);

  const auto iterations = csv_column(race / "results.csv", "iterations");
  REQUIRE(iterations.size() == 8);
  int i = 0;
  for (const char* label : {"a", "b", "c", "d", "e", "f", "g", "h"}) {
    INFO(label);
    const auto own = check_own_files(race / label);
    CHECK(iterations[i++] == static_cast<double>(own));
    if (label != std::string("h")) CHECK(own == static_cast<std::uint64_t>(iterations_each));
  }
  CHECK(read_summary(target).at("stop_reason") == "interrupted");
}
