// A run killed with kill -9 while it writes its checkpoint leaves no checkpoint.bin.tmp.PID
// behind once resumed: the write goes to an unnamed file (util/atomic_file.hpp), and a run that
// starts or resumes removes what a dead process left (docs/reliability.md).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "output/checkpoint.hpp"
#include "support/fixtures.hpp"
#include "support/sanitized.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
namespace fs = std::filesystem;

namespace {

// Starts the CLI with `args`, its output to /dev/null; returns its pid.
pid_t start_cli(const std::vector<std::string>& args) {
  std::vector<std::string> words{kCli};
  words.insert(words.end(), args.begin(), args.end());
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::freopen("/dev/null", "w", stdout);
    std::freopen("/dev/null", "w", stderr);
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

// Whether `pid` has a file of `dir` open that is being written atomically: a temporary by
// name, or an unnamed one (O_TMPFILE: "/dir/#12345 (deleted)").
bool writing_a_temporary(pid_t pid, const fs::path& dir) {
  std::error_code ec;
  for (fs::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string target = fs::read_symlink(it->path(), ec).string();
    if (ec || target.rfind(dir.string() + "/", 0) != 0) continue;
    if (target.find(".tmp.") != std::string::npos ||
        target.find(" (deleted)") != std::string::npos) {
      return true;
    }
  }
  return false;
}

std::vector<std::string> temporaries(const fs::path& dir) {
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename();
    if (name.find(".tmp") != std::string::npos) found.push_back(name);
  }
  return found;
}

}  // namespace

TEST_CASE(
    "checkpoint: a run killed with kill -9 while it writes a checkpoint leaves no "
    "temporary file once resumed",
    "[output][resume]") {
  TempDir dir;
  const fs::path out = dir / "run";
  // Two wide layers: a checkpoint of some 40 MB, which takes a while to write and sync.
  const std::vector<std::string> run{"train",
                                     "--model",
                                     "mlp",
                                     "--hidden",
                                     kSanitized ? "512,512" : "2048,2048",
                                     "--workers",
                                     "2",
                                     "--delay",
                                     "exp:mean=5ms",
                                     "--time",
                                     "4s",
                                     "--checkpoint-every",
                                     "0.05s",
                                     "--eval-every",
                                     "60s",
                                     "--no-progress",
                                     "--out",
                                     out.string()};
  const pid_t pid = start_cli(run);
  // Killed while a temporary of its folder is open, after its first checkpoint (then the one
  // written is a checkpoint, not run.toml or summary.json).
  bool caught = false;
  for (int i = 0; i < 600000 && !caught; ++i) {
    if (fs::exists(out / kCheckpointFile) && writing_a_temporary(pid, out)) {
      ::kill(pid, SIGKILL);
      caught = true;
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
  if (!caught) ::kill(pid, SIGKILL);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(caught);
  REQUIRE(WIFSIGNALED(status));
  // What a file system without O_TMPFILE leaves, or a kill between the link and the rename.
  const pid_t dead = ::fork();
  REQUIRE(dead >= 0);
  if (dead == 0) ::_exit(0);
  REQUIRE(::waitpid(dead, nullptr, 0) == dead);
  write_text(out / (std::string(kCheckpointFile) + ".tmp." + std::to_string(dead)), "partial");
  const auto r = run_cli({"train", "--resume", out.string(), "--time", "4s", "--no-progress"});
  INFO(r.output);
  (void)r;
  CHECK(temporaries(out).empty());
}
