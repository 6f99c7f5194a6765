// One owner per folder: while one process holds a run's or a race's --out, `train`,
// `train --force`, `train --resume` and `race` on it, on a folder inside it or on one around it
// are refused in one line naming the holder's pid and folder, exit 1, and no file changes; once
// the holder is gone the folder is free again, whatever its lock file says. (With live races and
// runs in other processes: folder_owner_cli_test.cpp.)
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <catch2/catch.hpp>

#include "output/folder_lock.hpp"
#include "support/fixtures.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

// Every file under `dir`, by relative path, with its bytes.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    files[fs::relative(e.path(), dir).string()] = s.str();
  }
  return files;
}

}  // namespace

TEST_CASE("folder lock: a second holder in any process is refused with the first one's pid",
          "[output][lock]") {
  TempDir dir;
  const fs::path out = dir / "new/run";  // created by the lock
  auto first = FolderLock::acquire(out);
  REQUIRE(first);
  CHECK(first->held());
  CHECK(fs::is_directory(out));
  // flock belongs to the open file, so a second open in this process conflicts as another
  // process's would.
  auto second = FolderLock::acquire(out);
  REQUIRE_FALSE(second);
  CHECK_THAT(second.error().message, Contains("--out " + out.string() + " is in use by process " +
                                              std::to_string(::getpid())) &&
                                         Contains("wait for it to end, or pass another --out"));
  { FolderLock moved = std::move(first).value(); }  // released with its last descriptor
  auto third = FolderLock::acquire(out);
  CHECK(third);

  std::ofstream(dir / "file") << "x";
  auto not_a_folder = FolderLock::acquire(dir / "file");
  REQUIRE_FALSE(not_a_folder);
  CHECK_THAT(not_a_folder.error().message, Contains("cannot create --out"));
}

TEST_CASE("folder lock: a folder inside a held one is refused naming the holder and its folder",
          "[output][lock]") {
  TempDir dir;
  const fs::path race = dir / "race";
  auto outer = FolderLock::acquire(race);
  REQUIRE(outer);
  const std::string me = "process " + std::to_string(::getpid());
  const fs::path canonical = fs::canonical(race);
  // The run folder, and one deeper, neither there yet: refused, and neither is created.
  for (const fs::path& inner : {race / "a", race / "a" / "deeper"}) {
    INFO(inner);
    auto refused = FolderLock::acquire(inner);
    REQUIRE_FALSE(refused);
    CHECK(line_count(refused.error().message) == 1);
    CHECK_THAT(refused.error().message,
               Contains("--out " + inner.string() + " is inside " + canonical.string() +
                        ", which is in use by " + me + " (its lock is " +
                        (canonical / FolderLock::kFile).string() + ")"));
    CHECK_FALSE(fs::exists(race / "a"));
  }
  // The holder itself may lock a folder inside it (a race, its runs), and only it: the lock
  // file must name the outer folder's pid.
  auto run = FolderLock::acquire(race / "a", OuterFolder{race, ::getpid()});
  REQUIRE(run);
  CHECK(fs::exists(race / "a" / FolderLock::kFile));
  auto other_pid = FolderLock::acquire(race / "b", OuterFolder{race, ::getpid() + 1});
  REQUIRE_FALSE(other_pid);
  CHECK_THAT(other_pid.error().message, Contains("is inside " + canonical.string()));
  // Under a held run inside the outer folder, the nearest holder is named.
  auto under_run = FolderLock::acquire(race / "a" / "x", OuterFolder{race, ::getpid()});
  REQUIRE_FALSE(under_run);
  CHECK_THAT(under_run.error().message,
             Contains("is inside " + (canonical / "a").string() + ", which is in use by " + me));
  // Released: the lock files left behind hold nothing.
  run = Error{"released"};
  outer = Error{"released"};
  CHECK(FolderLock::acquire(race / "a" / "x"));
}

TEST_CASE("folder lock: a folder around a held one is refused before anything is written",
          "[output][lock]") {
  TempDir dir;
  const fs::path top = dir / "top";
  const fs::path held_dir = top / "x" / "y" / "run";
  auto held = FolderLock::acquire(held_dir);
  REQUIRE(held);
  const std::string me = "process " + std::to_string(::getpid());
  for (const fs::path& around : {top, top / "x", fs::path(top.string() + "/x/y/"), dir.path()}) {
    INFO(around);
    const auto before = snapshot(dir.path());
    auto refused = FolderLock::acquire(around);
    REQUIRE_FALSE(refused);
    CHECK(line_count(refused.error().message) == 1);
    CHECK_THAT(refused.error().message,
               Contains("--out " + around.string() + " holds " + fs::canonical(held_dir).string() +
                        ", which is in use by " + me) &&
                   Contains("wait for it to end, or pass another --out"));
    CHECK_FALSE(FolderLock::check(around));
    CHECK(snapshot(dir.path()) == before);  // no lock file created around it
  }
  // A symlink to a held folder is not followed: it holds nothing of the folder it points to.
  const fs::path elsewhere = dir / "elsewhere";
  fs::create_directories(elsewhere);
  fs::create_directory_symlink(top, elsewhere / "link");
  CHECK(FolderLock::acquire(elsewhere));
  // The holder gone, the folder around it is free.
  held = Error{"released"};
  CHECK(FolderLock::acquire(top));
}

TEST_CASE("folder lock: a race's mpirun job is told the race's folder by the environment",
          "[output][lock]") {
  const auto outer_with = [](const char* value) {
    if (value == nullptr) {
      ::unsetenv(FolderLock::kOuterVariable);
    } else {
      ::setenv(FolderLock::kOuterVariable, value, 1);
    }
    auto outer = FolderLock::outer_from_environment();
    ::unsetenv(FolderLock::kOuterVariable);
    return outer;
  };
  const auto outer = outer_with("123:/tmp/r a:ce");
  REQUIRE(outer);
  CHECK(outer->pid == 123);
  CHECK(outer->folder == "/tmp/r a:ce");
  for (const char* bad : {"", "123", "123:", ":/tmp/r", "x1:/tmp/r", "0:/tmp/r", "-4:/tmp/r"}) {
    INFO(bad);
    CHECK_FALSE(outer_with(bad));
  }
  CHECK_FALSE(outer_with(nullptr));
}

TEST_CASE("folder lock: train, train --force, train --resume and race refuse a folder in use",
          "[output][lock][cli]") {
  TempDir dir;
  const fs::path run = dir / "run";
  const std::string data = repo_data_dir().string();
  const std::vector<std::string> train{"train",
                                       "--model",
                                       "softmax",
                                       "--rule",
                                       "k-async",
                                       "--workers",
                                       "4",
                                       "--k",
                                       "2",
                                       "--delay",
                                       "exp:mean=5ms",
                                       "--clock",
                                       "virtual",
                                       "--iterations",
                                       "40",
                                       "--checkpoint-every",
                                       "0.02s",
                                       "--no-progress",
                                       "--data-dir",
                                       data,
                                       "--out",
                                       run.string()};
  auto r = run_cli(train);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto cfg = dir / "race.toml";
  std::ofstream(cfg) << "model = \"softmax\"\nworkers = 2\nrule = \"async\"\n"
                        "delay = \"exp:mean=5ms\"\nclock = \"virtual\"\niterations = 5\n"
                        "[[run]]\nlabel = \"a\"\n";
  const fs::path race = dir / "race";
  REQUIRE(run_cli({"race", "--config", cfg.string(), "--data-dir", data, "--no-progress", "--out",
                   race.string()})
              .exit_code == 0);

  auto held_run = FolderLock::acquire(run);
  auto held_race = FolderLock::acquire(race);
  REQUIRE(held_run);
  REQUIRE(held_race);
  const auto run_before = snapshot(run);
  const auto race_before = snapshot(race);
  const std::string in_use = " is in use by process " + std::to_string(::getpid());

  std::vector<std::string> force = train;
  force.push_back("--force");
  const std::vector<std::vector<std::string>> refused{
      train,
      force,
      {"train", "--resume", run.string(), "--no-progress"},
      {"race", "--config", cfg.string(), "--data-dir", data, "--no-progress", "--force", "--out",
       race.string()},
      {"race", "--config", cfg.string(), "--data-dir", data, "--no-progress", "--resume", "--out",
       race.string()},
  };
  for (const auto& args : refused) {
    r = run_cli(args);
    INFO(args[0] << " " << args[1] << " ... " << args.back() << " -> " << r.output);
    CHECK(r.exit_code == 1);
    CHECK(line_count(r.output) == 1);
    CHECK_THAT(r.output, Contains("stalesgd: error: --out") && Contains(in_use));
  }
  CHECK(snapshot(run) == run_before);
  CHECK(snapshot(race) == race_before);

  // The holder gone, its lock file (with its pid) left behind blocks nothing.
  held_run = Error{"released"};
  held_race = Error{"released"};
  r = run_cli({"train", "--resume", run.string(), "--no-progress"});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Contains("holds a finished run"));
  r = run_cli(force);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  r = run_cli({"race", "--config", cfg.string(), "--data-dir", data, "--no-progress", "--force",
               "--out", race.string()});
  CHECK(r.exit_code == 0);
}
