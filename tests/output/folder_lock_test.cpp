// One owner per folder: while one process holds a run's or a race's --out, `train`,
// `train --force`, `train --resume` and `race` on it are refused in one line naming the
// holder's pid, exit 1, and no file in the folder changes; once the holder is gone the folder is
// free again, whatever its lock file says.
#include <unistd.h>

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
