// A signal while `stalesgd train` loads and checks its model ends the process at once: a
// TorchScript module of 40 MB takes about a second to load and probe inside LibTorch, which polls
// no flag, and before the start-up guard (tools/cli/startup_guard.hpp) the run went on through
// the evaluation timing and a final evaluation of the untrained model, seconds more.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <thread>

#include <catch2/catch.hpp>

#include "support/fixtures.hpp"
#include "support/torchscript_files.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

#ifdef STALESGD_HAVE_TORCHSCRIPT

namespace {

struct Ended {
  int exit_code = -1;
  std::string stderr_text;
};

// Runs the CLI with `args`, sends `signal` once it has begun to build the model, and waits for
// it.
Ended signalled_during_model_load(const std::vector<std::string>& args, const fs::path& err,
                                  int signal) {
  std::vector<std::string> words{kCli};
  words.insert(words.end(), args.begin(), args.end());
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::freopen("/dev/null", "w", stdout);
    std::freopen(err.c_str(), "w", stderr);
    std::signal(SIGINT, SIG_DFL);  // a shell's background job may have it ignored
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  // The plug-in is mapped when the model starts to be built; the load and probe take a second.
  bool loaded = false;
  const fs::path maps = "/proc/" + std::to_string(pid) + "/maps";
  for (int i = 0; i < 120000 && !loaded; ++i) {
    loaded = slurp(maps).find("libstalesgd_torchscript") != std::string::npos;
    if (!loaded) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ::kill(pid, loaded ? signal : SIGKILL);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(loaded);
  REQUIRE(WIFEXITED(status));
  return {WEXITSTATUS(status), slurp(err)};
}

}  // namespace

TEST_CASE(
    "train CLI: SIGTERM or SIGINT while the model is loaded and checked ends the process "
    "at once",
    "[cli][signal][torchscript]") {
  const auto model = exported_model("mlp-2048x3", "mlp", "--hidden 2048,2048,2048");
  for (const int signal : {SIGTERM, SIGINT}) {
    INFO("signal " << signal);
    TempDir dir;
    const fs::path out = dir / "run";
    const std::vector<std::string> args{"train",
                                        "--model",
                                        "torchscript:" + model.string(),
                                        "--workers",
                                        "2",
                                        "--iterations",
                                        "2",
                                        "--no-progress",
                                        "--out",
                                        out.string()};
    const auto ended = signalled_during_model_load(args, dir / "stderr", signal);
    INFO(ended.stderr_text);
    CHECK(ended.exit_code == 128 + signal);
    CHECK(line_count(ended.stderr_text) == 1);
    CHECK_THAT(ended.stderr_text,
               Contains(signal == SIGTERM ? "interrupted by SIGTERM before training started"
                                          : "interrupted by SIGINT before training started") &&
                   Contains("nothing was trained"));
    // Nothing was timed, scored or trained; run.log ends with the same line.
    const std::string log = slurp(out / "run.log");
    CHECK(log.find(" evaluation: ") == std::string::npos);
    CHECK(log.find(" snapshot at ") == std::string::npos);
    CHECK_THAT(log.substr(log.rfind('\n', log.size() - 2) + 1),
               Contains("warning interrupted by") && Contains("before training started"));
    CHECK_FALSE(fs::exists(out / "summary.json"));
    // A run that never trained: the same command runs it, no --force needed.
    const auto again = run_cli(args);
    INFO(again.output);
    CHECK(again.exit_code == 0);
  }
}

#endif
